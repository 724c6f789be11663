// The real-client matrix (lib/client_matrix.mjs) for the conformance source over Streamable HTTP.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/conformance.mjs';

runMatrix(source, 'http');
