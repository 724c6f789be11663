// What an assertion type is: its keys (checked when a spec is loaded) and its check (run on
// the outcome of the spec's call). Internal to src/spec.
//
// Adding an assertion type: write assertions/<name>.cpp defining an AssertionType, declare it
// at the end of this header, and list it in assertions/registry.cpp. The loader and the
// runner need no change.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/outcome.hpp"
#include "spec/spec.hpp"

namespace toolport::spec::detail {

enum class FieldKind {
    string,
    boolean,
    positive_number,
    string_list,
    any,  // any JSON value, null included
};

struct Field {
    const char* key;
    FieldKind kind;
    bool required;
};

// A bad value found by AssertionType::validate: which key, and what is wrong with it.
struct FieldProblem {
    std::string key;
    std::string message;
};

struct CheckContext {
    const Spec& spec;
    const Outcome& outcome;
    std::chrono::milliseconds elapsed;
    const RunOptions& options;
};

struct Verdict {
    bool passed = false;
    std::string message;  // why it failed (or, when it passed, what it found)
    std::string note;     // worth showing even when it passed (e.g. "wrote snapshot ...")

    static Verdict pass(std::string message = {}, std::string note = {}) {
        return {true, std::move(message), std::move(note)};
    }
    static Verdict fail(std::string message) { return {false, std::move(message), {}}; }
};

struct AssertionType {
    const char* name;
    std::vector<Field> fields;  // every key but "type"
    // Load-time checks beyond each field's kind (syntax of a path, ...); null when none.
    // Runs only when every field has the right kind.
    std::optional<FieldProblem> (*validate)(const Json& params);
    // `params` holds the assertion's keys but "type", as validated.
    Verdict (*check)(const Json& params, const CheckContext& context);
};

const AssertionType* find_assertion_type(std::string_view name);
// "success, error, contains_text, ..." for messages.
std::string assertion_type_names();

// One per assertion type, each in its own file under assertions/.
extern const AssertionType kSuccessAssertion;          // status.cpp
extern const AssertionType kErrorAssertion;            // status.cpp
extern const AssertionType kContainsTextAssertion;     // text.cpp
extern const AssertionType kNotContainsTextAssertion;  // text.cpp
extern const AssertionType kResponseTimeAssertion;     // response_time.cpp
extern const AssertionType kJsonPathAssertion;         // json_path.cpp
extern const AssertionType kRegexMatchAssertion;       // regex_match.cpp
extern const AssertionType kSnapshotAssertion;         // snapshot.cpp
extern const AssertionType kJsonSchemaAssertion;       // json_schema.cpp

}  // namespace toolport::spec::detail
