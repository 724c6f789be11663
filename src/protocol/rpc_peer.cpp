#include "protocol/rpc_peer.hpp"

#include "async/executor.hpp"

namespace toolport::protocol {

struct RpcPeer::Pending {
    std::string method;
    Completion<Json> reply;
    std::function<void()> cancel_timer;
    CancelToken* cancel = nullptr;
    CancelToken::CallbackId cancel_registration = 0;
    std::function<void(const Json&)> on_progress;
    std::uint64_t tag = 0;
};

RpcPeer::RpcPeer(Executor& executor, Hooks hooks) : executor_(executor), hooks_(std::move(hooks)) {}

RpcPeer::~RpcPeer() {
    // Timers and cancellation callbacks still scheduled check this.
    alive_.reset();
    // (The exception only when a request is left: a peer serving one stateless request
    // ends with none, and making one costs an allocation and a string.)
    if (!outgoing_.empty()) fail_all(std::make_exception_ptr(OperationCancelled("the connection ended")));
}

// ------------------------------------------------------------------ requests we send

RpcPeer::Started RpcPeer::begin(Outgoing request) {
    const std::int64_t id = ++next_id_;
    auto pending = std::make_shared<Pending>();
    pending->method = std::move(request.method);
    pending->on_progress = std::move(request.on_progress);
    pending->tag = request.tag;
    outgoing_.emplace(id, pending);

    std::weak_ptr<bool> alive = alive_;
    if (request.timeout.count() > 0) {
        pending->cancel_timer = executor_.schedule_after(request.timeout, [this, alive, id, timeout = request.timeout]() {
            if (alive.expired()) return;
            const std::string* method = method_of(id);
            if (!method) return;
            const std::string name = *method;
            fail(id, hooks_.timeout_error(name, timeout), "timed out after " + std::to_string(timeout.count()) + " ms");
        });
    }
    if (request.cancel) {
        pending->cancel = request.cancel;
        // The token may fire inside its owner's code (or at once, when it has fired
        // already): the request ends on the loop's next turn.
        pending->cancel_registration = request.cancel->on_cancel([this, alive, id]() {
            executor_.post([this, alive, id]() {
                if (!alive.expired()) fail(id, std::make_exception_ptr(OperationCancelled()), "request cancelled");
            });
        });
    }
    return {id, pending->reply};
}

std::optional<std::int64_t> RpcPeer::pending_id(const RequestId& id) const {
    // Ours are positive integers; a string "3" or 3.0 names none of them.
    if (!id.is_number_integer()) return std::nullopt;
    if (id.is_number_unsigned() && id.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    const auto value = id.get<std::int64_t>();
    if (!outgoing_.count(value)) return std::nullopt;
    return value;
}

const std::string* RpcPeer::method_of(std::int64_t id) const {
    auto it = outgoing_.find(id);
    return it == outgoing_.end() ? nullptr : &it->second->method;
}

std::uint64_t RpcPeer::tag_of(std::int64_t id) const {
    auto it = outgoing_.find(id);
    return it == outgoing_.end() ? 0 : it->second->tag;
}

std::shared_ptr<RpcPeer::Pending> RpcPeer::take(std::int64_t id) {
    auto it = outgoing_.find(id);
    if (it == outgoing_.end()) return nullptr;
    auto pending = std::move(it->second);
    outgoing_.erase(it);
    if (pending->cancel_timer) pending->cancel_timer();
    if (pending->cancel) pending->cancel->remove(pending->cancel_registration);
    return pending;
}

bool RpcPeer::finish(std::int64_t id, Json result) {
    auto pending = take(id);
    if (!pending) return false;
    // The requester resumes from the loop, not from inside the owner's read path.
    executor_.post(
        [reply = pending->reply, result = std::move(result)]() mutable { reply.set_value(std::move(result)); });
    return true;
}

bool RpcPeer::fail(std::int64_t id, std::exception_ptr error, const std::string& give_up_reason) {
    auto pending = take(id);
    if (!pending) return false;
    if (!give_up_reason.empty() && hooks_.on_give_up) hooks_.on_give_up(id, pending->method, give_up_reason);
    executor_.post([reply = pending->reply, error]() mutable { reply.set_error(error); });
    return true;
}

void RpcPeer::fail_all(const std::exception_ptr& error) {
    auto all = std::move(outgoing_);
    outgoing_.clear();
    for (auto& [id, pending] : all) {
        if (pending->cancel_timer) pending->cancel_timer();
        if (pending->cancel) pending->cancel->remove(pending->cancel_registration);
        executor_.post([reply = pending->reply, error]() mutable { reply.set_error(error); });
    }
}

bool RpcPeer::receive_reply(Response response) {
    auto id = pending_id(response.id);
    return id && finish(*id, std::move(response.result));
}

bool RpcPeer::receive_error(const ErrorResponse& error) {
    auto id = pending_id(error.id);
    if (!id) return false;
    RpcError received(error.code, error.message, error.data);
    received.from_peer = true;
    return fail(*id, std::make_exception_ptr(std::move(received)));
}

bool RpcPeer::receive_progress(const Json& params) {
    if (!params.is_object()) return false;
    auto token = params.find("progressToken");
    if (token == params.end()) return false;
    auto id = pending_id(*token);
    if (!id) return false;
    auto on_progress = outgoing_.at(*id)->on_progress;  // a copy: the callback may end the request
    if (!on_progress) return false;
    on_progress(params);
    return true;
}

// ------------------------------------------------------------------ requests we serve

bool RpcPeer::begin_serving(const RequestId& id, std::function<void(const std::string&)> stop) {
    return serving_.emplace(id_key(id), std::move(stop)).second;
}

void RpcPeer::end_serving(const RequestId& id) { serving_.erase(id_key(id)); }

bool RpcPeer::serving(const RequestId& id) const { return serving_.count(id_key(id)) > 0; }

bool RpcPeer::receive_cancelled(const Json& params, const std::string& default_reason) {
    if (!params.is_object()) return false;
    auto id = params.find("requestId");
    if (id == params.end()) return false;
    auto it = serving_.find(id_key(*id));
    if (it == serving_.end()) return false;
    std::string reason = default_reason;
    if (auto text = params.find("reason"); text != params.end() && text->is_string()) reason = *text;
    auto stop = it->second;  // a copy: stopping may end the request, which erases it
    stop(reason);
    return true;
}

void RpcPeer::stop_serving_all(const std::string& reason) {
    auto all = std::move(serving_);
    serving_.clear();
    for (auto& [key, stop] : all) stop(reason);
}

}  // namespace toolport::protocol
