// What the pinning tests (pins_test, pins_redis_test) build their listings from: a tool's
// pin record, and a tool as a source lists it.
#pragma once

#include <string>

#include "providers/pin_definition.hpp"
#include "providers/tool_set.hpp"
#include "stores/pin_store.hpp"

namespace toolport::test_support {

// The pin of a tool named `name` described `description` (`identity`: its source's).
inline stores::PinRecord tool_pin(const std::string& name, const std::string& description, Json identity = nullptr) {
    providers::ToolDeclaration d;
    d.name = name;
    d.description = description;
    return pins::make_pin("tool", name, pins::tool_definition(d, identity));
}

inline Task<ToolResult> answer_ok(RequestContext&, const Json&) { co_return ToolResult::text("ok"); }

// A tool as a source lists it, answering "ok".
inline providers::SyncedTool synced(const std::string& name, const std::string& description) {
    providers::ToolDeclaration d;
    d.name = name;
    d.description = description;
    d.handler = answer_ok;
    return {std::move(d), "t"};
}

// One change of each kind, as a listing of one (PinStore::record_listing).
inline Task<bool> pin_if_absent(stores::PinStore& store, std::string source, stores::PinRecord record) {
    stores::ListingWrites writes;
    writes.first_sights.push_back(std::move(record));
    co_return co_await store.record_listing(std::move(source), std::move(writes)) == 0;
}
inline Task<void> set_pending(stores::PinStore& store, std::string source, stores::PinRecord record) {
    stores::ListingWrites writes;
    writes.pending.push_back(std::move(record));
    co_await store.record_listing(std::move(source), std::move(writes));
}
inline Task<void> drop_pending(stores::PinStore& store, std::string source, std::string key) {
    stores::ListingWrites writes;
    writes.settled.push_back(std::move(key));
    co_await store.record_listing(std::move(source), std::move(writes));
}

}  // namespace toolport::test_support
