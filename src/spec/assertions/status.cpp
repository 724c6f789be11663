// success and error: did the call succeed?
#include <fmt/format.h>

#include "spec/assertions/assertion_type.hpp"
#include "util/ascii.hpp"

namespace toolport::spec::detail {

namespace {

Verdict check_success(const Json&, const CheckContext& context) {
    const Outcome& outcome = context.outcome;
    switch (outcome.kind) {
        case Outcome::Kind::result: return Verdict::pass("the call succeeded");
        case Outcome::Kind::tool_error: return Verdict::fail("expected success, but " + outcome.describe_error());
        case Outcome::Kind::call_failed:
            return Verdict::fail("expected success, but the call failed: " + outcome.describe_error());
    }
    return Verdict::fail("unknown outcome");
}

Verdict check_error(const Json& params, const CheckContext& context) {
    const Outcome& outcome = context.outcome;
    if (!outcome.is_error()) {
        return Verdict::fail("expected an error, but the call succeeded; response text: " + preview_text(outcome.text));
    }
    auto wanted = params.find("messageContains");
    if (wanted == params.end()) return Verdict::pass("the call failed as expected: " + outcome.describe_error());
    const auto& needle = wanted->get_ref<const std::string&>();
    // A failed call is matched on its message and on its description (which has the
    // JSON-RPC error code), so both "Unknown tool" and "-32602" can be looked for.
    std::string haystack = outcome.text;
    if (outcome.kind == Outcome::Kind::call_failed) haystack += "\n" + outcome.error;
    if (util::to_lower_ascii(haystack).find(util::to_lower_ascii(needle)) == std::string::npos) {
        return Verdict::fail(fmt::format("the error message does not contain {} (case-insensitive); it is {}",
                                         preview_text(needle), preview_text(outcome.text)));
    }
    return Verdict::pass(fmt::format("the call failed with a message containing {}", preview_text(needle)));
}

}  // namespace

const AssertionType kSuccessAssertion{"success", {}, nullptr, check_success};

const AssertionType kErrorAssertion{"error", {{"messageContains", FieldKind::string, false}}, nullptr, check_error};

}  // namespace toolport::spec::detail
