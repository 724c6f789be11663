#include "pipeline/stages/guard.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "observability/tracer.hpp"
#include "protocol/request_id.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"

namespace toolport::pipeline {

namespace {

using namespace std::chrono;

const std::string& who(const CallerIdentity& caller) {
    return caller.subject.empty() ? caller.principal : caller.subject;
}

ToolError denial(const std::string& guard, GuardPhase phase, const GuardVerdict& verdict) {
    const std::string reason = verdict.reason.empty() ? std::string("no reason given") : verdict.reason;
    ToolError error(ToolErrorCode::guard_denied,
                    fmt::format("Guard \"{}\" denied {}: {}", guard,
                                phase == GuardPhase::before ? "the call" : "the tool's result", reason));
    if (!verdict.suggestion.empty()) error.suggest(verdict.suggestion);
    error.detail("guard", guard).detail("phase", std::string(to_string(phase)));
    return error;
}

// The replacement must be what it replaces: arguments are an object, a result a CallToolResult.
void check_replacement(GuardPhase phase, const Json& replacement) {
    if (phase == GuardPhase::before) {
        if (!replacement.is_object()) throw GuardFailure("its replacement arguments are not a JSON object");
        return;
    }
    try {
        if (!replacement.is_object() || !replacement.contains("content")) throw std::invalid_argument("no content");
        (void)ToolResult::from_json(replacement);
    } catch (const std::exception&) {
        throw GuardFailure("its replacement result is not a tool result (an object with a content array)");
    }
}

}  // namespace

void GuardStage::add_guard(GuardSettings settings, std::shared_ptr<Guard> guard) {
    auto limiter = std::make_unique<GuardLimiter>(executor_, std::max<std::size_t>(1, settings.max_concurrency));
    std::string name = settings.name;
    guards_[name] = Entry{std::move(settings), std::move(guard), std::move(limiter)};
}

void GuardStage::terminate() {
    for (auto& [name, entry] : guards_) entry.guard->terminate();
}

std::string GuardStage::verdict_key(const std::string& guard, const GuardInput& input, const Json& payload) {
    // Whatever the verdict may depend on goes into the digest: the tool, the caller, the
    // arguments (after: also the result). Values only ever appear hashed.
    std::string material;
    material.append(input.source).append(1, '\0').append(input.tool).append(1, '\0');
    material.append(who(input.caller)).append(1, '\0');
    material.append(input.arguments.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (input.phase == GuardPhase::after) {
        material.append(1, '\0').append(payload.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    return fmt::format("guard:{}:{}:{}", guard, to_string(input.phase), util::sha256_hex(material));
}

void GuardStage::count(const std::string& guard, GuardPhase phase, std::string_view outcome) {
    const std::string key = fmt::format("{}\n{}\n{}", guard, to_string(phase), outcome);
    counters_
        .get(key,
             [&] {
                 return observability::metrics().counter("toolport_guard_checks_total",
                                                         {{"guard", guard},
                                                          {"phase", std::string(to_string(phase))},
                                                          {"outcome", std::string(outcome)}});
             })
        .increment();
}

Task<GuardVerdict> GuardStage::ask(Entry& entry, const GuardInput& input, const Json& payload, Call& call) {
    const GuardSettings& s = entry.settings;
    RequestContext& ctx = call.ctx;
    auto mark = [&](std::string decision, bool cached = false) {
        call.guard_marks.push_back({s.name, std::string(to_string(input.phase)), std::move(decision), cached});
    };
    // With tracing on, each verdict is an event of the call's span.
    auto& span = ctx.span();
    auto event = [&](std::string_view what) {
        if (span.recording()) span.add_event(what, {{"guard", s.name}, {"phase", std::string(to_string(input.phase))}});
    };
    std::string key;
    if (s.cache_verdicts.count() > 0) {
        key = verdict_key(s.name, input, payload);
        if (auto cached = co_await cache_.get(key)) {
            std::optional<GuardVerdict> verdict;
            try {
                verdict = GuardVerdict::from_json(Json::parse(*cached));
            } catch (const std::exception&) {
                // An entry this version cannot read: ask the guard.
            }
            if (verdict) {
                count(s.name, input.phase, "cached");
                event(verdict->allow ? "guard.cached_allow" : "guard.cached_deny");
                mark(!verdict->allow ? "deny" : verdict->replacement ? "modify" : "allow", /*cached=*/true);
                if (!verdict->allow) throw denial(s.name, input.phase, *verdict);
                co_return std::move(*verdict);
            }
        }
    }

    const auto started = steady_clock::now();
    std::optional<GuardVerdict> verdict;
    std::string failure;
    if (!co_await entry.limiter->acquire(s.timeout)) {
        failure = fmt::format("it is at its limit of {} checks at once, and none ended within {} ms", s.max_concurrency,
                              s.timeout.count());
    } else {
        // Given back on every way out, cancellation included.
        struct Slot {
            GuardLimiter& limiter;
            ~Slot() { limiter.release(); }
        } slot{*entry.limiter};
        GuardCallLimits limits{started + s.timeout, s.timeout, &ctx.cancel_token(),
                               span.recording() ? &span.context() : nullptr};
        try {
            GuardVerdict answer = co_await entry.guard->check(input, limits);
            if (answer.replacement) check_replacement(input.phase, *answer.replacement);
            verdict = std::move(answer);
        } catch (const GuardFailure& e) {
            failure = e.what();
        } catch (const ToolError&) {
            throw;
        } catch (const std::exception& e) {
            failure = e.what();
        }
    }
    durations_
        .get(s.name,
             [&] {
                 return observability::metrics().histogram("toolport_guard_check_seconds", {{"guard", s.name}});
             })
        .observe(duration<double>(steady_clock::now() - started).count());

    if (!verdict) {
        if (s.failure_mode.value_or(FailureMode::closed) == FailureMode::closed) {
            count(s.name, input.phase, "failed_closed");
            event("guard.failed_closed");
            mark("failed_closed");
            throw ToolError(ToolErrorCode::guard_unavailable,
                            fmt::format("Guard \"{}\" could not check {}: {}", s.name,
                                        input.phase == GuardPhase::before ? "the call" : "the tool's result", failure))
                .detail("guard", s.name)
                .detail("phase", std::string(to_string(input.phase)));
        }
        count(s.name, input.phase, "failed_open");
        event("guard.failed_open");
        mark("failed_open");
        spdlog::warn("guard {}: could not check {} of {} ({}); failure_mode open: it proceeds unchecked", s.name,
                     input.phase == GuardPhase::before ? "the arguments" : "the result", input.tool, failure);
        co_return GuardVerdict{};
    }
    if (!key.empty() && verdict->cacheable_for.count() > 0) {
        const auto ttl = std::min(verdict->cacheable_for, s.cache_verdicts);
        co_await cache_.put(key, verdict->to_json().dump(-1, ' ', false, Json::error_handler_t::replace),
                            duration_cast<milliseconds>(ttl));
    }
    if (!verdict->allow) {
        count(s.name, input.phase, "deny");
        event("guard.deny");
        mark("deny");
        throw denial(s.name, input.phase, *verdict);
    }
    count(s.name, input.phase, verdict->replacement ? "modify" : "allow");
    event(verdict->replacement ? "guard.modify" : "guard.allow");
    mark(verdict->replacement ? "modify" : "allow");
    co_return std::move(*verdict);
}

Task<ToolResult> GuardStage::handle(Call& call, const Next& next) {
    const auto& names = call.policy->guards;
    const Json request_id = protocol::loggable_id(call.ctx.request_id());
    const CallerIdentity& caller = call.ctx.caller();

    std::optional<Json> arguments;  // set when a guard replaced them
    for (const auto& name : names) {
        auto it = guards_.find(name);
        if (it == guards_.end() || !it->second.settings.before) continue;
        const Json& current = arguments ? *arguments : call.arguments;
        GuardInput input{GuardPhase::before, call.tool->name, call.tool->source, current, nullptr, caller, request_id};
        GuardVerdict verdict = co_await ask(it->second, input, current, call);
        if (verdict.replacement) arguments = std::move(*verdict.replacement);
    }

    ToolResult result = unassigned_result();
    if (arguments) {
        // The stages after this one and the tool see the replacement; the accounting they
        // fill in comes back to the call the outer stages hold.
        Call inner(call.ctx, call.tool, *arguments, call.policy);
        inner.started = call.started;
        inner.chain = call.chain;
        inner.downstream_api_calls = call.downstream_api_calls;
        inner.cache_status = call.cache_status;
        std::exception_ptr failure;
        try {
            result = co_await next(inner);
        } catch (...) {
            failure = std::current_exception();
        }
        call.downstream_api_calls = inner.downstream_api_calls;
        call.cache_status = inner.cache_status;
        if (failure) std::rethrow_exception(failure);
    } else {
        result = co_await next(call);
    }

    const bool checks_results = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
        auto it = guards_.find(name);
        return it != guards_.end() && it->second.settings.after;
    });
    if (!checks_results) co_return result;
    result.expand_raw_parts();
    Json as_json = result.to_json();
    bool replaced = false;
    const Json& ran_with = arguments ? *arguments : call.arguments;
    for (const auto& name : names) {
        auto it = guards_.find(name);
        if (it == guards_.end() || !it->second.settings.after) continue;
        GuardInput input{GuardPhase::after, call.tool->name, call.tool->source, ran_with, &as_json, caller, request_id};
        GuardVerdict verdict = co_await ask(it->second, input, as_json, call);
        if (verdict.replacement) {
            as_json = std::move(*verdict.replacement);
            replaced = true;
        }
    }
    if (replaced) co_return ToolResult::from_json(as_json);
    co_return result;
}

}  // namespace toolport::pipeline
