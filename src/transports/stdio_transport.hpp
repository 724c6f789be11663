// stdio transport: newline-delimited JSON-RPC on stdin/stdout, one session.
// Logs never go to stdout (it carries only protocol messages).
#pragma once

#include <chrono>
#include <cstddef>

namespace toolport {

class AsioExecutor;
class McpServer;

struct StdioOptions {
    std::size_t max_message_bytes = 16 * 1024 * 1024;
    std::size_t max_json_depth = 64;
    // Members of one JSON-RPC batch (protocol 2025-03-26); a larger batch is refused whole.
    std::size_t max_batch_size = 1000;
    // After stdin closes, how long requests still running may take to answer.
    std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
};

// Serves the process's stdin/stdout until stdin closes; returns the exit status. `executor`
// is the engine's loop, the one `server` runs on.
int serve_stdio(McpServer& server, AsioExecutor& executor, const StdioOptions& options, int in_fd = 0, int out_fd = 1);

}  // namespace toolport
