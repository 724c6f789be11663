#include "pipeline/stages/audit.hpp"

#include "async/completion.hpp"
#include "async/control_signal.hpp"
#include "observability/events.hpp"
#include "pipeline/stages/content_scan.hpp"
#include "pipeline/stages/observe.hpp"
#include "protocol/json_writer.hpp"
#include "protocol/request_id.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"
#include "util/redaction/json_redaction.hpp"

namespace toolport::pipeline {

namespace {

// A string id as it is, a number as its digits (id_key: no serializer for an integer).
std::string id_text(const protocol::RequestId& id) {
    if (protocol::is_big_integer_id(id)) return std::string(protocol::big_integer_id_digits(id));
    if (id.is_string()) return id.get<std::string>();
    return protocol::id_key(id);
}

double ms_since(std::chrono::steady_clock::time_point started) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

const std::string* string_member(const Json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

}  // namespace

AuditStage::AuditStage(std::shared_ptr<stores::AuditLog> log, std::shared_ptr<stores::AuditFeed> feed,
                       std::string replica)
    : log_(std::move(log)), feed_(std::move(feed)), replica_(log_ ? log_->options().replica : std::move(replica)) {}

void AuditStage::hand_over(stores::AuditRecord&& record) {
    if (feed_) feed_->publish(record);
    if (log_) log_->submit(std::move(record));
}

stores::AuditRecord AuditStage::base_record(const RequestContext& ctx, const Json* arguments,
                                            util::redaction::DetectorSet payloads, const std::string& source) const {
    stores::AuditRecord r;
    const CallerIdentity& caller = ctx.caller();
    r.method = ctx.method();
    r.principal = caller.principal;
    r.subject = caller.subject;
    r.session = caller.session_id;
    r.profile = caller.view;
    r.trace_id = caller.trace_id;
    r.request_id = id_text(ctx.request_id());
    r.replica = replica_;
    if (arguments && !arguments->is_null()) {
        // Small arguments are hashed when the record is encoded (the last digest is kept:
        // repeated arguments are not hashed again); large ones here, so that no record
        // carries more than a digest of them.
        protocol::write_json(*arguments, r.canonical_arguments);
        if (r.canonical_arguments.size() > 4096) {
            r.args_sha256 = util::sha256_hex(r.canonical_arguments);
            r.canonical_arguments.clear();
        }
        // Only by choice, and never the values of keys that look like secrets. Huge
        // arguments keep their digest only: a record stays a line a reader can take.
        if (log_ && log_->options().include_arguments) {
            static constexpr std::size_t kMaxArgumentBytes = 16 * 1024;
            Json redacted = observability::redact_fields(*arguments);
            util::redaction::RedactionCounts counts;
            if (util::redaction::redact_json(redacted, payloads, &counts)) count_redactions(source, "audit", counts);
            if (redacted.dump(-1, ' ', false, Json::error_handler_t::replace).size() <= kMaxArgumentBytes) {
                r.arguments = std::move(redacted);
            } else {
                r.arguments = Json{{"omitted", "larger than 16 KiB; see args_sha256"}};
            }
        }
    }
    return r;
}

Task<ToolResult> AuditStage::handle(Call& call, const Next& next) {
    if (!recording()) co_return co_await next(call);  // a chain that does not ask idle() first
    const auto started = std::chrono::system_clock::now();
    ToolResult result = unassigned_result();
    std::string outcome = "ok", code;
    std::exception_ptr rethrow;
    try {
        result = co_await next(call);
        if (result.is_error) {
            outcome = "tool_error";
            code = ObserveStage::outcome_code(result);
        }
    } catch (const ToolError& e) {
        result = call.tool->error_result(e);
        outcome = "tool_error";
        code = ObserveStage::outcome_code(result);
    } catch (const OperationCancelled&) {
        outcome = "cancelled";
        rethrow = std::current_exception();
    } catch (const ControlSignal&) {
        // An input round trip (stateless MRTR): the call is not over; its retry is recorded.
        throw;
    } catch (const RpcError& e) {
        // A protocol error goes back to the client as one, and the server records it
        // (ServerSession::call_tool); a client's refusal (sampling, elicitation) becomes a
        // tool error there (server_methods.cpp).
        if (!e.from_peer) throw;
        outcome = "tool_error";
        code = "INTERNAL_ERROR";
        rethrow = std::current_exception();
    } catch (const std::exception&) {
        outcome = "tool_error";
        code = "INTERNAL_ERROR";
        rethrow = std::current_exception();
    }
    stores::AuditRecord r = base_record(call.ctx, &call.arguments, call.policy->content_scan.payloads,
                                        call.tool->source);
    r.time = started;
    r.target = call.tool->name;
    r.source = call.tool->source;
    r.outcome = std::move(outcome);
    r.code = std::move(code);
    r.duration_ms = ms_since(call.started);
    r.cache = std::string(to_string(call.cache_status));
    r.guards = std::move(call.guard_marks);
    if (result.meta.is_object()) {
        if (const auto* cache = string_member(result.meta, "cache_status")) r.cache = *cache;
        auto d = result.meta.find("downstream_api_calls");
        if (d != result.meta.end() && d->is_number_integer()) r.downstream_calls = d->get<long long>();
    }
    if (!r.downstream_calls) r.downstream_calls = call.downstream_api_calls.value_or(call.ctx.downstream_requests());
    hand_over(std::move(r));
    if (rethrow) std::rethrow_exception(rethrow);
    co_return result;
}

void AuditStage::served(const RequestContext& ctx, std::chrono::system_clock::time_point started,
                        std::chrono::steady_clock::time_point started_steady, std::exception_ptr error) {
    if (!recording()) return;
    std::string outcome = "ok", code;
    // A tools/call comes here only when refused with a protocol error: the pipeline
    // records every other.
    if (ctx.method() == "tools/call" && !error) return;
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const OperationCancelled&) {
            if (ctx.method() == "tools/call") return;  // the pipeline recorded it
            outcome = "cancelled";
        } catch (const ControlSignal&) {
            return;  // an input round trip: the retry is recorded
        } catch (const RpcError& e) {
            outcome = "protocol_error";
            code = std::to_string(e.code);
        } catch (const ToolError& e) {
            // A tools/call comes here with a tool error only when an access rule denied it.
            outcome = e.code() == ToolErrorCode::tool_forbidden ? "denied" : "tool_error";
            code = std::string(code_name(e.code()));
        } catch (...) {
            outcome = "protocol_error";
            code = std::to_string(protocol::error_code::kInternalError);
        }
    }
    const Json& params = ctx.params();
    const Json* arguments = nullptr;
    if (params.is_object()) {
        auto it = params.find("arguments");
        if (it != params.end()) arguments = &*it;
    }
    stores::AuditRecord r = base_record(ctx, arguments);
    r.time = started;
    if (const auto* uri = string_member(params, "uri")) r.target = *uri;
    else if (const auto* name = string_member(params, "name")) r.target = *name;
    r.outcome = std::move(outcome);
    r.code = std::move(code);
    r.duration_ms = ms_since(started_steady);
    hand_over(std::move(r));
}

}  // namespace toolport::pipeline
