// json_path: a value in the response document (see spec/json_path.hpp for the syntax).
#include <fmt/format.h>

#include "spec/assertions/assertion_type.hpp"
#include "spec/json_path.hpp"

namespace toolport::spec::detail {

namespace {

const char* type_name(const Json& value) {
    switch (value.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::boolean: return "boolean";
        case Json::value_t::string: return "string";
        case Json::value_t::array: return "array";
        case Json::value_t::object: return "object";
        default: return value.is_number() ? "number" : "value";
    }
}

std::optional<FieldProblem> validate_json_path(const Json& params) {
    try {
        JsonPath path(params["path"].get<std::string>());
    } catch (const std::invalid_argument& e) {
        return FieldProblem{"path", e.what()};
    }
    return std::nullopt;
}

Verdict check_json_path(const Json& params, const CheckContext& context) {
    JsonPath path(params["path"].get<std::string>());
    Json document;
    try {
        document = response_document(context.outcome);
    } catch (const std::runtime_error& e) {
        return Verdict::fail(e.what());
    }
    std::optional<Json> actual = path.evaluate(document);
    auto expected = params.find("expected");
    if (expected == params.end()) {
        if (!actual) return Verdict::fail(fmt::format("path \"{}\" does not exist in the response", path.text()));
        return Verdict::pass(fmt::format("path \"{}\" exists with value {}", path.text(), preview(*actual)));
    }
    if (!actual) {
        return Verdict::fail(
            fmt::format("path \"{}\" does not exist in the response (expected {})", path.text(), preview(*expected)));
    }
    if (*actual == *expected) return Verdict::pass(fmt::format("path \"{}\" is {}", path.text(), preview(*actual)));
    std::string hint;
    if (std::string(type_name(*actual)) != type_name(*expected)) {
        hint = fmt::format(" (a {}, not a {})", type_name(*actual), type_name(*expected));
    }
    return Verdict::fail(
        fmt::format("path \"{}\" is {}{}, expected {}", path.text(), preview(*actual), hint, preview(*expected)));
}

}  // namespace

const AssertionType kJsonPathAssertion{
    "json_path",
    {{"path", FieldKind::string, true}, {"expected", FieldKind::any, false}},
    validate_json_path,
    check_json_path,
};

}  // namespace toolport::spec::detail
