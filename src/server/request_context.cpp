#include "server/request_context.hpp"

#include "async/executor.hpp"
#include "server/input_required.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "util/json_release.hpp"

namespace toolport {

const char* client_capability_for(std::string_view method) {
    if (method == "sampling/createMessage") return "sampling";
    if (method == "elicitation/create") return "elicitation";
    if (method == "roots/list") return "roots";
    return nullptr;
}

RequestContext::RequestContext(std::shared_ptr<ServerSession> session, protocol::RequestId id, std::string method,
                               Json params, protocol::Revision revision)
    : session_(std::move(session)),
      id_(std::move(id)),
      method_(std::move(method)),
      params_(params.is_null() ? Json::object() : std::move(params)),
      revision_(revision) {}

const Json* RequestContext::meta() const {
    if (!meta_found_) {
        meta_found_ = true;
        if (params_.is_object()) {
            const auto& members = params_.get_ref<const Json::object_t&>();
            if (auto it = members.find(std::string_view("_meta")); it != members.end() && it->second.is_object())
                meta_ = &it->second;
        }
    }
    return meta_;
}

// The request's params are freed without nlohmann's heap stack (util/json_release.hpp).
RequestContext::~RequestContext() { util::release_json(params_); }

const Json& RequestContext::client_capabilities() const {
    if (protocol::is_stateless(revision_)) return stateless_client_capabilities(params_);
    return session_->client_capabilities();
}

const Json& RequestContext::client_info() const { return session_->client_info(); }
const CallerIdentity& RequestContext::caller() const { return session_->caller(); }

Task<void> RequestContext::pace_downstream_request() {
    ++downstream_requests_;
    if (downstream_pacer_) co_await downstream_pacer_();
}
Executor& RequestContext::executor() const { return session_->server().executor(); }

namespace {
// The request's progressToken (in its _meta, `meta`), when it has a usable one.
const Json* progress_token(const Json* meta) {
    if (!meta) return nullptr;
    auto token = meta->find(std::string_view("progressToken"));
    if (token == meta->end() || !(token->is_string() || token->is_number())) return nullptr;
    return &*token;
}
}  // namespace

bool RequestContext::wants_progress() const { return progress_token(meta()) != nullptr; }

void RequestContext::progress(double progress, std::optional<double> total, std::string message) {
    const Json* token = progress_token(meta());
    if (!token) return;
    Json p = {{"progressToken", *token}, {"progress", progress}};
    if (total) p["total"] = *total;
    if (!message.empty()) p["message"] = std::move(message);
    if (!related_task_.empty())
        p["_meta"] = Json{{"io.modelcontextprotocol/related-task", {{"taskId", related_task_}}}};
    session_->send(protocol::make_notification("notifications/progress", std::move(p)), &id_);
}

void RequestContext::log(LogLevel level, Json data, std::string logger) {
    if (!session_->should_log(level, *this)) return;
    Json p = {{"level", std::string(to_string(level))}, {"data", std::move(data)}};
    if (!logger.empty()) p["logger"] = std::move(logger);
    if (!related_task_.empty())
        p["_meta"] = Json{{"io.modelcontextprotocol/related-task", {{"taskId", related_task_}}}};
    session_->send(protocol::make_notification("notifications/message", std::move(p)), &id_);
}

Task<Json> RequestContext::ask_client(ClientRequest request) {
    std::vector<ClientRequest> one;
    one.push_back(std::move(request));
    auto answers = co_await ask_client_all(std::move(one));
    co_return std::move(answers.front());
}

Task<std::vector<Json>> RequestContext::ask_client_all(std::vector<ClientRequest> requests) {
    std::vector<Json> answers;
    if (protocol::is_stateless(revision_)) {
        // Multi round-trip: answers come back in the retried request; missing ones end
        // this run of the handler with an InputRequiredResult.
        answers = collect_input_responses(*this, requests, client_requests_made_);
        client_requests_made_ += static_cast<int>(requests.size());
        co_return answers;
    }
    // Measures the wait on every way out (answer, error, cancellation).
    struct WaitClock {
        RequestContext& ctx;
        explicit WaitClock(RequestContext& c) : ctx(c) { ctx.client_wait_started_ = ctx.executor().now(); }
        ~WaitClock() {
            ctx.client_waited_ += ctx.executor().now() - *ctx.client_wait_started_;
            ctx.client_wait_started_.reset();
        }
    };
    for (auto& r : requests) {
        ++client_requests_made_;
        // A handler's own name for the answer travels along (clients ignore unknown _meta),
        // so a gateway in front of a stateless client can ask it under the same key.
        if (!r.key.empty()) {
            if (!r.params.is_object()) r.params = Json::object();
            r.params["_meta"][std::string(kInputKeyMeta)] = r.key;
        }
        WaitClock clock(*this);
        answers.push_back(co_await session_->request_client(std::move(r.method), std::move(r.params), id_,
                                                            r.cancel ? *r.cancel : cancel_, revision_));
    }
    co_return answers;
}

std::chrono::steady_clock::duration RequestContext::client_wait() const {
    auto total = client_waited_;
    if (client_wait_started_) total += executor().now() - *client_wait_started_;
    return total;
}

void RequestContext::require_client_capability(const std::string& capability) const {
    if (client_capabilities().contains(capability)) return;
    throw RpcError(protocol::error_code::kMissingRequiredClientCapability,
                   "Missing required client capability: " + capability,
                   Json{{"requiredCapabilities", {{capability, Json::object()}}}});
}

void RequestContext::close_stream() { session_->close_stream(id_); }

Task<void> RequestContext::sleep(std::chrono::milliseconds delay) { return executor().sleep(delay, &cancel_); }

}  // namespace toolport
