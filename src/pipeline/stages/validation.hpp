// ValidationStage ("validate"): checks a call's arguments against the tool's inputSchema
// before anything else runs. Schemas are compiled once per tool definition (draft-07 and
// 2020-12, see schema/json_schema.hpp). A failure is MISSING_PARAMETER (a required
// property is absent) or INVALID_ARGUMENT, naming the parameter, what was provided, what
// was expected and an example drawn from the schema.
#pragma once

#include <memory>
#include <unordered_map>

#include "pipeline/pipeline.hpp"
#include "schema/json_schema.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

class ValidationStage final : public Stage {
public:
    std::string_view name() const override { return "validate"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // The error for invalid `arguments` (nullopt when valid). Public for tests.
    std::optional<ToolError> check(const std::shared_ptr<const ToolSpec>& tool, const Json& arguments);

private:
    struct Entry {
        std::weak_ptr<const ToolSpec> tool;                    // the definition the schema was compiled from
        std::shared_ptr<const schema::CompiledSchema> schema;  // null: schema unusable, skip
    };
    std::shared_ptr<const schema::CompiledSchema> schema_for(const std::shared_ptr<const ToolSpec>& tool);
    std::unordered_map<const ToolSpec*, Entry> compiled_;
};

}  // namespace toolport::pipeline
