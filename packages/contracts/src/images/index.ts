/** Image tools of the API host (sections 2.3, 2.6, 4.2). */
export * from './images.dto';
