// The real-client matrix (lib/client_matrix.mjs) for the gateway source over Streamable HTTP.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/gateway.mjs';

runMatrix(source, 'http');
