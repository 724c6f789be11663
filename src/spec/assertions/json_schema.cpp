// json_schema: the response document validated against a JSON Schema file (draft-07 or
// 2020-12, the default for schemas without "$schema"), with Toolport's own validator.
#include <filesystem>

#include <fmt/format.h>

#include "schema/json_schema.hpp"
#include "spec/assertions/assertion_type.hpp"
#include "document/document.hpp"

namespace toolport::spec::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxErrorsShown = 5;

std::optional<FieldProblem> validate_json_schema(const Json& params) {
    fs::path file = params["schema"].get<std::string>();
    if (file.empty()) return FieldProblem{"schema", "must name a schema file"};
    if (file.is_absolute()) return FieldProblem{"schema", "must be a path relative to the spec's folder"};
    return std::nullopt;
}

Verdict check_json_schema(const Json& params, const CheckContext& context) {
    const auto& name = params["schema"].get_ref<const std::string&>();
    fs::path path = context.spec.folder / name;
    schema::CompiledSchema compiled;
    try {
        std::string text = document::read_text_file(path);
        std::string ext = path.extension().string();
        Json schema_json = ext == ".yaml" || ext == ".yml" ? document::parse_yaml(text).value
                                                           : document::parse_json_value(text);
        compiled = schema::compile(schema_json);
    } catch (const document::DocumentError& e) {
        return Verdict::fail(fmt::format("schema file \"{}\" {}", name, e.what()));
    } catch (const schema::SchemaError& e) {
        return Verdict::fail(fmt::format("schema file \"{}\" is not a usable JSON Schema: {}", name, e.what()));
    }

    Json document;
    try {
        document = response_document(context.outcome);
    } catch (const std::runtime_error& e) {
        return Verdict::fail(e.what());
    }
    auto result = compiled.validate(document);
    if (result.valid) return Verdict::pass(fmt::format("the response is valid against \"{}\"", name));
    std::string message = fmt::format("the response does not match schema \"{}\":", name);
    std::size_t shown = 0;
    for (const auto& error : result.errors) {
        if (shown++ == kMaxErrorsShown) break;
        message += fmt::format("\n  at {}: {}", error.instance_location.empty() ? "the root" : error.instance_location,
                               error.message);
    }
    if (result.errors.size() > kMaxErrorsShown || result.truncated) message += "\n  ... and more";
    return Verdict::fail(message);
}

}  // namespace

const AssertionType kJsonSchemaAssertion{"json_schema",
                                         {{"schema", FieldKind::string, true}},
                                         validate_json_schema,
                                         check_json_schema};

}  // namespace toolport::spec::detail
