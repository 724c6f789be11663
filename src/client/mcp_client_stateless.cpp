// McpClient in the stateless revision (2026-07-28): server/discover instead of the
// handshake, the _meta every request carries, multi round-trip requests (a result with
// resultType "input_required" answered and retried), stand-ins for the methods the
// revision removed, and the subscriptions/listen request that brings notifications.
#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "async/executor.hpp"
#include "client/mcp_client.hpp"
#include "client/mcp_client_listening.hpp"
#include "protocol/versions.hpp"
#include "server/stateless.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

using namespace std::chrono_literals;

namespace {

// Awaits a reply, as a task of its own (for spawn).
Task<Json> await_reply(Completion<Json> reply) { co_return co_await reply; }

constexpr const char* kSubscriptionIdKey = "io.modelcontextprotocol/subscriptionId";
constexpr const char* kAcknowledged = "notifications/subscriptions/acknowledged";
constexpr std::size_t kRetiredListensKept = 32;

bool declares(const Json& capabilities, const char* feature, const char* flag) {
    auto it = capabilities.find(feature);
    return it != capabilities.end() && it->is_object() && it->value(flag, false) == true;
}

// "input_1: elicitation/create, input_2: roots/list", for error messages.
std::string describe_questions(const Json& input_requests) {
    std::string text;
    for (const auto& [key, question] : input_requests.items()) {
        if (!text.empty()) text += ", ";
        text += util::sanitize_for_message(key, 60);
        if (question.is_object() && question.contains("method") && question["method"].is_string()) {
            text += ": " + util::sanitize_for_message(question["method"].get<std::string>(), 60);
        }
    }
    return text;
}

// The listen request a notification names in its _meta, if any. Servers send the request
// id as it was (a number for ours) or as text.
std::optional<std::int64_t> subscription_of(const Json& params) {
    if (!params.is_object()) return std::nullopt;
    auto meta = params.find("_meta");
    if (meta == params.end() || !meta->is_object()) return std::nullopt;
    auto id = meta->find(kSubscriptionIdKey);
    if (id == meta->end()) return std::nullopt;
    if (id->is_number_integer()) return id->get<std::int64_t>();
    if (id->is_string()) {
        const std::string text = id->get<std::string>();
        if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
            return std::nullopt;
        }
        return std::stoll(text);
    }
    return std::nullopt;
}

// From the data of a -32022 error ({"supported": [...], "requested": ...}): the latest
// stateless revision it names that this client speaks.
std::optional<std::string> version_offered_instead(const Json& data) {
    if (!data.is_object() || !data.contains("supported") || !data["supported"].is_array()) return std::nullopt;
    std::optional<protocol::Revision> best;
    for (const auto& entry : data["supported"]) {
        if (!entry.is_string()) continue;
        auto revision = protocol::parse_revision(entry.get<std::string>());
        if (revision && protocol::is_stateless(*revision) && (!best || *revision > *best)) best = revision;
    }
    if (!best) return std::nullopt;
    return std::string(protocol::name(*best));
}

}  // namespace

// ------------------------------------------------------------------ discover

Task<Json> McpClient::discover() {
    const auto chosen = protocol::parse_revision(options_.protocol_version);
    stateless_ = true;
    stateless_version_ = std::string(protocol::name(chosen ? *chosen : protocol::kLatest));
    transport_->use_stateless_revision(stateless_version_);
    Json result;
    std::optional<std::string> other;
    try {
        result = co_await round_trip("server/discover", with_stateless_meta(Json::object(), {}));
    } catch (const RpcError& e) {
        // Refused our version (SEP-2575): ask again, once, in one it names that we speak.
        if (e.code == protocol::error_code::kUnsupportedProtocolVersion) other = version_offered_instead(e.data);
        if (!other) throw;
    }
    if (other) {
        spdlog::debug("MCP client: {} refused protocol version {}; asking again with {}", describe_server(),
                      stateless_version_, *other);
        stateless_version_ = *other;
        transport_->use_stateless_revision(stateless_version_);
        result = co_await round_trip("server/discover", with_stateless_meta(Json::object(), {}));
    }
    if (!result.is_object()) {
        throw ClientError(
            fmt::format("{} answered server/discover with a result that is not an object", describe_server()));
    }
    if (auto versions = result.find("supportedVersions");
        versions != result.end() && versions->is_array() &&
        std::find(versions->begin(), versions->end(), Json(stateless_version_)) == versions->end()) {
        throw ClientError(fmt::format("{} does not support protocol version {} (it supports {})", describe_server(),
                                      stateless_version_, util::sanitize_for_message(versions->dump(), 200)));
    }
    accept_server_description(result);
    protocol_version_ = stateless_version_;
    co_return result;
}

Json McpClient::with_stateless_meta(Json params, const RequestOptions& options) const {
    if (!params.is_object()) params = Json::object();
    Json& meta = params["_meta"];
    if (!meta.is_object()) meta = Json::object();
    meta[meta_key::kProtocolVersion] = stateless_version_;
    meta[meta_key::kClientInfo] = {{"name", options_.client_name}, {"version", options_.client_version}};
    const bool own_capabilities = options.client_capabilities && options.client_capabilities->is_object();
    meta[meta_key::kClientCapabilities] = own_capabilities ? *options.client_capabilities : options_.capabilities;
    const std::string level = options.log_level.value_or(log_level_);
    if (!level.empty()) meta[meta_key::kLogLevel] = level;
    return params;
}

// ------------------------------------------------------------------ multi round-trip requests

Task<Json> McpClient::stateless_request(std::string method, Json params, RequestOptions options) {
    std::weak_ptr<bool> alive = alive_;
    if (params.is_null()) params = Json::object();
    for (int round = 0;; ++round) {
        Json result = co_await round_trip(method, with_stateless_meta(params, options), options);
        // A reply posted just before the client was destroyed may still resume us.
        if (alive.expired()) throw ClientError("the MCP client was destroyed");
        if (!result.is_object() || result.value("resultType", Json()) != "input_required") co_return result;

        Json questions = result.value("inputRequests", Json());
        Json state = result.value("requestState", Json());
        if (!questions.is_object() || questions.empty()) {
            throw ClientError(
                fmt::format("{} answered {} with input_required but no inputRequests", describe_server(), method));
        }
        if (!options.on_input_required) {
            throw InputRequiredError(fmt::format("{} needs answers to complete {} ({}), and the request has no "
                                                 "on_input_required handler",
                                                 describe_server(), method, describe_questions(questions)),
                                     std::move(questions), std::move(state));
        }
        if (round == kMaxInputRounds) {
            throw InputRequiredError(fmt::format("{} still asked for input ({}) after {} rounds of {}; gave up",
                                                 describe_server(), describe_questions(questions), kMaxInputRounds,
                                                 method),
                                     std::move(questions), std::move(state));
        }
        Json answers = co_await options.on_input_required(questions);
        if (alive.expired()) throw ClientError("the MCP client was destroyed");
        if (options.cancel && options.cancel->cancelled()) throw OperationCancelled();
        if (!answers.is_object()) {
            throw ClientError(
                fmt::format("the on_input_required handler answered {}'s questions with something that is "
                            "not an object of answers",
                            method));
        }
        // The server keeps earlier rounds' answers in requestState; this round's go along.
        params["inputResponses"] = std::move(answers);
        if (state.is_null()) params.erase("requestState");
        else params["requestState"] = std::move(state);
    }
}

// ------------------------------------------------------------------ removed methods

bool McpClient::removed_in_stateless(const std::string& method) {
    return method == "ping" || method == "logging/setLevel" || method == "resources/subscribe" ||
           method == "resources/unsubscribe";
}

Task<Json> McpClient::stand_in_for_removed(std::string method, Json params, RequestOptions options) {
    if (method == "ping") {
        // Liveness: the cheapest request every server of the revision answers.
        co_await round_trip("server/discover", with_stateless_meta(Json::object(), options), options);
        co_return Json::object();
    }
    if (method == "logging/setLevel") {
        if (!params.is_object() || !params.contains("level") || !params["level"].is_string()) {
            throw ClientError("logging/setLevel needs a string \"level\"");
        }
        log_level_ = params["level"].get<std::string>();
        co_return Json::object();
    }
    // resources/subscribe and resources/unsubscribe: what subscriptions/listen asks for.
    if (!params.is_object() || !params.contains("uri") || !params["uri"].is_string()) {
        throw ClientError(method + " needs a string \"uri\"");
    }
    if (!listening_ || !listening_->resource_subscriptions) {
        throw RpcError(protocol::error_code::kMethodNotFound,
                       fmt::format("{} does not offer resource subscriptions", describe_server()));
    }
    const std::string uri = params["uri"];
    const bool changed = method == "resources/subscribe" ? listening_->resource_uris.insert(uri).second
                                                         : listening_->resource_uris.erase(uri) > 0;
    if (changed) open_listen();
    co_return Json::object();
}

// ------------------------------------------------------------------ subscriptions/listen

void McpClient::start_listening() {
    const Json& caps = server_capabilities_;
    listening_ = std::make_unique<Listening>();
    listening_->tools_list_changed = declares(caps, "tools", "listChanged");
    listening_->prompts_list_changed = declares(caps, "prompts", "listChanged");
    listening_->resources_list_changed = declares(caps, "resources", "listChanged");
    listening_->resource_subscriptions = declares(caps, "resources", "subscribe");
    listening_->wanted = static_cast<bool>(on_notification_);
    open_listen();
}

void McpClient::open_listen() {
    Listening& l = *listening_;
    if (!l.wanted || l.refused || state_ != State::ready) return;
    l.stop_retrying();
    Json filter = Json::object();
    if (l.tools_list_changed) filter["toolsListChanged"] = true;
    if (l.prompts_list_changed) filter["promptsListChanged"] = true;
    if (l.resources_list_changed) filter["resourcesListChanged"] = true;
    if (l.resource_subscriptions && !l.resource_uris.empty()) {
        filter["resourceSubscriptions"] = Json(l.resource_uris);
    }
    auto retire = [this](std::int64_t& id) {
        if (id == 0) return;
        listening_->retired.insert(std::exchange(id, 0));
        if (listening_->retired.size() > kRetiredListensKept) listening_->retired.erase(listening_->retired.begin());
    };
    std::vector<std::int64_t> to_cancel;
    if (l.replacing) to_cancel.push_back(l.replacing);  // asks for what is no longer wanted
    retire(l.replacing);
    if (filter.empty()) {
        // Nothing left to hear about.
        if (l.active) to_cancel.push_back(l.active);
        retire(l.active);
    } else {
        RequestOptions options;
        // The one open now stays until this one is acknowledged (note_listen_notification).
        auto listen = send_request("subscriptions/listen",
                                   with_stateless_meta(Json{{"notifications", filter}}, options), options,
                                   /*timed=*/false, [&l](std::int64_t id) { (l.active ? l.replacing : l.active) = id; });
        std::weak_ptr<bool> alive = alive_;
        spawn(await_reply(std::move(listen.reply)),
              [this, alive, id = listen.id](std::optional<Json>, std::exception_ptr error) {
                  if (!alive.expired()) listen_ended(id, error);
              });
    }
    for (auto id : to_cancel) peer_.fail(id, std::make_exception_ptr(OperationCancelled()), "subscription replaced");
}

std::vector<std::int64_t> McpClient::stop_listening() {
    Listening& l = *listening_;
    l.stop_retrying();
    std::vector<std::int64_t> ended;
    for (std::int64_t* id : {&l.active, &l.replacing}) {
        if (*id == 0) continue;
        ended.push_back(std::exchange(*id, 0));
        l.retired.insert(ended.back());
        peer_.fail(ended.back(), std::make_exception_ptr(OperationCancelled()));
    }
    return ended;
}

bool McpClient::note_listen_notification(const std::string& method, const Json& params) {
    if (!listening_) return method != kAcknowledged;
    Listening& l = *listening_;
    auto subscription = subscription_of(params);
    if (subscription && l.retired.count(*subscription)) return false;  // replaced: its successor tells
    const bool acknowledges = method == kAcknowledged;
    // The successor speaks (its acknowledgement comes first; a server that skips it is
    // taken at its word too): the listen it replaces is cancelled.
    if (l.replacing && (subscription == l.replacing || (acknowledges && !subscription))) {
        const std::int64_t old = std::exchange(l.active, std::exchange(l.replacing, 0));
        if (old) {
            l.retired.insert(old);
            // Not from inside the transport's read path.
            std::weak_ptr<bool> alive = alive_;
            executor_.post([this, alive, old]() {
                if (!alive.expired())
                    peer_.fail(old, std::make_exception_ptr(OperationCancelled()), "subscription replaced");
            });
        }
    }
    if (acknowledges && (!subscription || subscription == l.active)) l.failures = 0;
    return !acknowledges;
}

void McpClient::listen_ended(std::int64_t id, std::exception_ptr error) {
    if (!listening_) return;
    Listening& l = *listening_;
    const bool was_active = id == l.active, was_replacing = id == l.replacing;
    if (!was_active && !was_replacing) return;  // retired
    (was_active ? l.active : l.replacing) = 0;
    if (state_ != State::ready) return;
    try {
        if (error) std::rethrow_exception(error);
        spdlog::debug("MCP client: {} ended subscriptions/listen; listening again", describe_server());
    } catch (const RpcError& e) {
        spdlog::warn("MCP client: {} refused subscriptions/listen ({} {}); its notifications will not arrive",
                     describe_server(), e.code, util::sanitize_for_message(e.message, 200));
        l.refused = true;
        return;
    } catch (const OperationCancelled&) {
        return;  // only ever by us, when it was replaced
    } catch (const std::exception& e) {
        spdlog::debug("MCP client: subscriptions/listen to {} ended: {}", describe_server(), e.what());
    } catch (...) {
        spdlog::debug("MCP client: subscriptions/listen to {} ended", describe_server());
    }
    // The other one (older or newer) still brings notifications; only when it asks for a
    // stale set (this was its replacement) or there is none is a new listen needed.
    if (l.replacing && was_active) return;
    const auto pause = std::min<std::chrono::milliseconds>(1000ms * (1 << std::min(l.failures, 5)), 30s);
    ++l.failures;
    std::weak_ptr<bool> alive = alive_;
    l.cancel_retry = executor_.schedule_after(pause, [this, alive]() {
        if (alive.expired() || !listening_) return;
        listening_->cancel_retry = nullptr;
        open_listen();
    });
}

}  // namespace toolport::client
