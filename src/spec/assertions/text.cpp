// contains_text and not_contains_text: substrings of the response text.
#include <fmt/format.h>

#include "spec/assertions/assertion_type.hpp"
#include "util/ascii.hpp"

namespace toolport::spec::detail {

namespace {

bool response_contains(const Json& params, const CheckContext& context) {
    const auto& text = params["text"].get_ref<const std::string&>();
    bool ignore_case = params.value("caseInsensitive", false);
    if (ignore_case)
        return util::to_lower_ascii(context.outcome.text).find(util::to_lower_ascii(text)) != std::string::npos;
    return context.outcome.text.find(text) != std::string::npos;
}

std::string how(const Json& params) { return params.value("caseInsensitive", false) ? " (case-insensitive)" : ""; }

Verdict check_contains(const Json& params, const CheckContext& context) {
    const auto& text = params["text"].get_ref<const std::string&>();
    if (response_contains(params, context))
        return Verdict::pass(fmt::format("the response contains {}", preview_text(text)));
    return Verdict::fail(fmt::format("the response does not contain {}{}; response text: {}", preview_text(text),
                                     how(params), preview_text(context.outcome.text)));
}

Verdict check_not_contains(const Json& params, const CheckContext& context) {
    const auto& text = params["text"].get_ref<const std::string&>();
    if (!response_contains(params, context)) {
        return Verdict::pass(fmt::format("the response does not contain {}", preview_text(text)));
    }
    return Verdict::fail(fmt::format("the response contains {}{}, which it should not; response text: {}",
                                     preview_text(text), how(params), preview_text(context.outcome.text)));
}

const std::vector<Field> kTextFields{
    {"text", FieldKind::string, true},
    {"caseInsensitive", FieldKind::boolean, false},
};

}  // namespace

const AssertionType kContainsTextAssertion{"contains_text", kTextFields, nullptr, check_contains};

const AssertionType kNotContainsTextAssertion{"not_contains_text", kTextFields, nullptr, check_not_contains};

}  // namespace toolport::spec::detail
