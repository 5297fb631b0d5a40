export * from './brep';
export * from './mesh';
export * from './step-boxes';
export * from './torus-stl';
export * from './translate';
