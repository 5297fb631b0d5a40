/** Model translation for the web viewer (section 4.9). */
export * from './viewer.dto';
