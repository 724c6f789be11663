// RpcPeer: the request bookkeeping of one end of a JSON-RPC connection, shared by both
// ends of MCP: the server's ServerSession (its sampling, elicitation and roots requests to
// the client, and the client's requests it serves) and the client's McpClient (its
// requests to the server, and the server's requests it answers).
//
// Two tables:
//   requests we sent   an id each (positive integers, never reused), the awaitable reply,
//                      a timeout, the caller's CancelToken, progress routing by token,
//                      and a caller's tag; a reply, an error, a timeout, a cancellation or
//                      the end of the connection finishes each exactly once.
//   requests we serve  by id as the other side sent it, so notifications/cancelled can
//                      stop one, a second request with an id still in flight is refused,
//                      and closing stops them all.
//
// The peer writes nothing itself: the owner sends the messages (its transport knows how),
// and is told through Hooks when a request of ours is given up (timeout, cancellation) so
// it can tell the other side to stop. Replies are handed back on the executor's next turn,
// never from inside the owner's read path. Everything runs on one executor thread.
//
//   auto [id, reply] = peer.begin({.method = "sampling/createMessage", .timeout = 60s, .cancel = &token});
//   send(make_request(id, "sampling/createMessage", params));
//   Json result = co_await reply;  // or throws RpcError, the timeout error, OperationCancelled
#pragma once

#include <algorithm>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/rpc_error.hpp"

namespace toolport {
class Executor;
}

namespace toolport::protocol {

class RpcPeer {
public:
    struct Hooks {
        // A request of ours was given up before its reply (it timed out, its CancelToken
        // fired, or the owner failed it with a reason): tell the other side to stop.
        std::function<void(std::int64_t id, const std::string& method, const std::string& reason)> on_give_up;
        // The error a request that timed out ends with.
        std::function<std::exception_ptr(const std::string& method, std::chrono::milliseconds after)> timeout_error;
    };

    // A request of ours, before it is sent.
    struct Outgoing {
        std::string method;
        // No answer within this ends the request with Hooks::timeout_error (zero: no timeout).
        std::chrono::milliseconds timeout{0};
        // Firing it ends the request with OperationCancelled and gives it up.
        CancelToken* cancel = nullptr;
        // notifications/progress whose progressToken is this request's id arrive here.
        std::function<void(const Json& params)> on_progress;
        // The owner's mark for the request (tag_of()).
        std::uint64_t tag = 0;
    };
    struct Started {
        std::int64_t id;
        Completion<Json> reply;
    };

    RpcPeer(Executor& executor, Hooks hooks);
    // Fails whatever is still pending (OperationCancelled) without giving anything up.
    ~RpcPeer();
    RpcPeer(const RpcPeer&) = delete;
    RpcPeer& operator=(const RpcPeer&) = delete;

    // ---- requests we send

    // Registers a request under a fresh id; send it with that id, then await the reply.
    Started begin(Outgoing request);
    // The id of a pending request of ours that `id` names, if it names one.
    std::optional<std::int64_t> pending_id(const RequestId& id) const;
    const std::string* method_of(std::int64_t id) const;
    std::uint64_t tag_of(std::int64_t id) const;  // 0 when not pending
    std::size_t pending() const { return outgoing_.size(); }
    // Our next ids come after `base` (replicas serving one session keep theirs apart).
    void set_id_base(std::int64_t base) { next_id_ = std::max(next_id_, base); }

    // Ends request `id` (false when it is not pending: answered already, timed out, or
    // never ours). A non-empty `give_up_reason` also calls Hooks::on_give_up.
    bool finish(std::int64_t id, Json result);
    bool fail(std::int64_t id, std::exception_ptr error, const std::string& give_up_reason = {});
    // Every pending request, e.g. when the connection ends (nothing is given up).
    void fail_all(const std::exception_ptr& error);

    // A reply from the other side: finishes its request, or an error response fails it
    // with RpcError. False when it answers no pending request of ours (late or unknown).
    bool receive_reply(Response response);
    bool receive_error(const ErrorResponse& error);
    // notifications/progress: hands `params` to the request whose id is its progressToken.
    // False when no pending request asked for progress under that token.
    bool receive_progress(const Json& params);

    // ---- requests we serve

    // Records a request of the other side's while it is served; `stop` ends it early (its
    // argument says why). False, and nothing recorded, when a request with that id is still
    // being served: JSON-RPC ids must be unique among a peer's requests in flight.
    bool begin_serving(const RequestId& id, std::function<void(const std::string& reason)> stop);
    void end_serving(const RequestId& id);
    bool serving(const RequestId& id) const;
    std::size_t serving_count() const { return serving_.size(); }
    // notifications/cancelled from the other side: stops the request it names (with its
    // reason, or `default_reason`). False when it names none in flight (finished already:
    // the spec says to ignore it then).
    bool receive_cancelled(const Json& params, const std::string& default_reason);
    // Stops every request being served (the connection is closing).
    void stop_serving_all(const std::string& reason);

private:
    struct Pending;
    std::shared_ptr<Pending> take(std::int64_t id);

    Executor& executor_;
    Hooks hooks_;
    std::int64_t next_id_ = 0;
    std::map<std::int64_t, std::shared_ptr<Pending>> outgoing_;
    std::unordered_map<std::string, std::function<void(const std::string&)>> serving_;  // key: id as JSON text
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace toolport::protocol
