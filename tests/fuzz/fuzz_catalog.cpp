// fuzz_catalog: what a REST tool catalog's API hands Toolport, checked against properties,
// not only for crashes (src/providers/rest):
//
//   0  a catalog page: every tool read from it either has a repaired input schema that is
//      an object schema the validator compiles, or is left out with a reason; the names
//      made for the tools fit ^[a-zA-Z0-9_-]{1,64}$ and are unique.
//   1  an execute answer: read into a tool result or a tool error, whose message never
//      repeats the secret the input may contain.
//   2  an event stream, fed whole and byte by byte: the same chunks (those before a failure
//      included), the same outcome.
//
// The first byte picks the reader; the rest is its input. A violated property aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "providers/rest/catalog_listing.hpp"
#include "providers/rest/execute_answer.hpp"
#include "providers/rest/schema_repair.hpp"
#include "providers/rest/tool_names.hpp"
#include "schema/json_schema.hpp"

using namespace toolport;
using namespace toolport::rest;

namespace {

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

bool safe_name(const std::string& name) {
    if (name.empty() || name.size() > kMaxToolName) return false;
    for (unsigned char c : name) {
        if (!std::isalnum(c) && c != '_' && c != '-') return false;
    }
    return true;
}

void catalog_page(std::string_view input) {
    auto answer = Json::parse(input, nullptr, false);
    if (answer.is_discarded()) return;
    ListSettings list;
    list.pagination = Pagination::page;
    list.success_path = "success";
    CatalogPage page;
    try {
        page = parse_catalog_page(std::move(answer), list);
    } catch (const CatalogError&) {
        return;
    }
    std::vector<std::string> wanted, names;
    for (auto& tool : page.tools) {
        auto repair = repair_input_schema(std::move(tool.input_schema));
        if (repair.unrepairable.empty()) {
            if (!repair.schema.is_object() || repair.schema.value("type", Json()) != "object") {
                violated("a repaired schema is not an object schema");
            }
            try {
                schema::compile(repair.schema);
            } catch (const schema::SchemaError&) {
                // Allowed: the source then leaves the tool out (ToolSet), with a warning.
            }
        }
        wanted.push_back(tool.title.empty() ? safe_tool_name(tool.name) : name_from_title(tool.title));
        names.push_back(tool.name);
        if (!safe_name(wanted.back())) violated("a safe name is not safe");
    }
    auto unique = unique_tool_names(wanted, names);
    std::set<std::string> seen;
    for (const auto& name : unique) {
        if (!safe_name(name)) violated("a unique name is not safe");
        if (!seen.insert(name).second) violated("two tools got one name");
    }
}

const std::string kSecret = "s3cret-budget-key";

void execute_answer(std::string_view input) {
    auto answer = Json::parse(input, nullptr, false);
    if (answer.is_discarded()) return;
    ExecuteSettings execute;
    execute.output_paths = {"response.data.output", "output", "result"};
    execute.error_paths = {"error", "response.data.error"};
    execute.success_paths = {"success", "response.success"};
    execute.meta_paths = {"cost"};
    try {
        read_execute_answer(answer, execute, {kSecret});
    } catch (const ToolError& e) {
        if (std::string(e.what()).find(kSecret) != std::string::npos) violated("a secret in an error message");
    }
}

std::string outcome_of(std::string_view input, bool byte_by_byte) {
    StreamedOutput stream({kSecret}, 4096);
    std::string seen;
    if (byte_by_byte) {
        for (char c : input) {
            for (auto& chunk : stream.feed(std::string_view(&c, 1))) seen += chunk + '\x1f';
        }
    } else {
        for (auto& chunk : stream.feed(input)) seen += chunk + '\x1f';
    }
    if (const auto& error = stream.error()) {
        if (std::string(error->what()).find(kSecret) != std::string::npos) violated("a secret in a stream error");
        return seen + "error:" + std::string(code_name(error->code()));
    }
    return seen + (stream.done() ? "done" : "open");
}

void event_stream(std::string_view input) {
    if (outcome_of(input, false) != outcome_of(input, true)) violated("a stream read differently when cut");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
        case 0: catalog_page(input); break;
        case 1: execute_answer(input); break;
        default: event_stream(input); break;
    }
    return 0;
}
