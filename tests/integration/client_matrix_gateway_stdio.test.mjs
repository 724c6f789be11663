// The real-client matrix (lib/client_matrix.mjs) for the gateway source over stdio.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/gateway.mjs';

runMatrix(source, 'stdio');
