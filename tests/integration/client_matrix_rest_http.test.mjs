// The real-client matrix (lib/client_matrix.mjs) for the rest source over Streamable HTTP.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/rest.mjs';

runMatrix(source, 'http');
