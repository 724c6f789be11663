// Every assertion type a spec may use, by the name written in `type:`.
#include "spec/assertions/assertion_type.hpp"

namespace toolport::spec::detail {

namespace {

// In the order mcp-server-kit documents them (also the order of assertion_type_names()).
const AssertionType* const kAssertionTypes[] = {
    &kSuccessAssertion,         &kErrorAssertion,        &kContainsTextAssertion,
    &kNotContainsTextAssertion, &kResponseTimeAssertion, &kJsonPathAssertion,
    &kRegexMatchAssertion,      &kSnapshotAssertion,     &kJsonSchemaAssertion,
};

}  // namespace

const AssertionType* find_assertion_type(std::string_view name) {
    for (const AssertionType* type : kAssertionTypes) {
        if (name == type->name) return type;
    }
    return nullptr;
}

std::string assertion_type_names() {
    std::string names;
    for (const AssertionType* type : kAssertionTypes) {
        if (!names.empty()) names += ", ";
        names += type->name;
    }
    return names;
}

}  // namespace toolport::spec::detail
