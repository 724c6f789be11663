// The real-client matrix (lib/client_matrix.mjs) for the tango source over stdio.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/tango.mjs';

runMatrix(source, 'stdio');
