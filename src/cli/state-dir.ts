// Where the store and artifacts live (src/session/state-dir.ts): chosen by the operator, never
// derived from a child's input.
export { defaultStateDir } from '../session/state-dir.js';
