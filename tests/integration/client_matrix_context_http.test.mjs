// The real-client matrix (lib/client_matrix.mjs) for the context source over Streamable HTTP.
import { runMatrix } from './lib/client_matrix.mjs';
import { source } from './lib/matrix/context.mjs';

runMatrix(source, 'http');
