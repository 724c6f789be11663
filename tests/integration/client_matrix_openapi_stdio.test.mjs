// The real-client matrix (lib/client_matrix.mjs) for the openapi source over stdio.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/openapi.mjs';

runMatrix(source, 'stdio');
