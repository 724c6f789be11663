// PinStore: where the approved ("pinned") definitions of tools, resource templates and
// prompts live, with the definitions seen since that differ ("pending" an operator's
// review), per source. One interface, two homes:
//   - LocalPinStore: a JSON file in the state directory, rewritten whole and atomically
//     (temp file, fsync, rename, fsync of the directory: a kill -9 leaves the old file or
//     the new one, never half of one), under an advisory lock so a server and
//     `toolport pins approve` never lose each other's writes;
//   - RedisPinStore (redis_pin_store.cpp): hashes under the store's key prefix, so every
//     replica reads and approves the same pins.
// The guard that checks listings against them is providers/pin_guard.hpp.
//
// Keys within a source are "<kind>:<name>" (tool:search, prompt:review,
// template:file:///{path}). The version changes with every write by anyone: the guard
// polls it and reloads on a change, which is how an approval reaches a running server.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "async/task.hpp"
#include "util/json.hpp"

namespace toolport::stores {

struct PinRecord {
    std::string kind;         // tool, prompt, template
    std::string name;         // as served
    std::string digest;       // SHA-256 of the canonical definition (name included)
    std::string body_digest;  // the same without the name: a rename keeps it
    Json definition;          // the definition that was digested (for diffs)
    std::string time;         // when it was pinned or first seen (ISO 8601)
    std::string by;           // who approved it ("first sight" for a pin made unasked)
    std::string change;       // pending only: what changed, one line

    std::string key() const { return kind + ":" + name; }
    Json to_json() const;
    static std::optional<PinRecord> from_json(const Json& j);
};

using PinMap = std::map<std::string, PinRecord>;  // by key()

struct SourcePins {
    PinMap pinned;
    PinMap pending;
};

using PinSnapshot = std::map<std::string, SourcePins>;  // by source name

struct PinStoreError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What one listing of a source changed, written together: a gateway's first sight of a
// thousand-tool upstream is one write, not a thousand (each rewrote the whole pins file,
// fsync included, on the event loop: quadratic, and a first listing took a minute).
struct ListingWrites {
    std::vector<PinRecord> first_sights;  // pinned only where the key has no pin yet
    std::vector<PinRecord> pending;       // definitions that differ from their pin
    std::vector<std::string> settled;     // keys whose pending definition is dropped

    bool empty() const { return first_sights.empty() && pending.empty() && settled.empty(); }
};

class PinStore {
public:
    virtual ~PinStore() = default;
    virtual std::string_view backend() const = 0;
    // Every source's pins. Throws PinStoreError when the store cannot be read.
    virtual Task<PinSnapshot> load() = 0;
    // Changes with every write (cheap: the guard asks every few seconds).
    virtual Task<std::string> version() = 0;
    // Writes a listing's changes in one step: each first sight is pinned unless the source
    // already has a pin under its key (two replicas that see a tool first at once keep one
    // pin); each pending definition replaces an earlier one of its key; settled keys lose
    // theirs. Returns how many first sights found a pin already there.
    virtual Task<std::size_t> record_listing(std::string source, ListingWrites writes) = 0;
    // record_listing, and the store's version right after the write when the store was at
    // `expected_version` before it (nobody else wrote since the caller last read it): the
    // caller's copy with this write applied is then what the store holds, and its next poll
    // need not read the store again for its own write. Empty when the store had moved, when
    // a first sight found a pin already there (lost > 0), and from stores that cannot tell
    // (the default).
    struct RecordedListing {
        std::size_t lost = 0;       // as record_listing returns it
        std::string version_after;  // see above
    };
    virtual Task<RecordedListing> record_listing_from(std::string source, ListingWrites writes,
                                                      std::string expected_version) {
        (void)expected_version;
        co_return RecordedListing{co_await record_listing(std::move(source), std::move(writes)), {}};
    }
    // Makes `record` the pin of its key and drops the key's pending definition.
    virtual Task<void> approve(std::string source, PinRecord record) = 0;
    // Forgets the pin and pending definition of `key` ("" : of the whole source). Returns
    // how many entries went.
    virtual Task<std::size_t> reset(std::string source, std::string key) = 0;
};

// The file in the state directory: $XDG_STATE_HOME/toolport/pins.json, else
// ~/.local/state/toolport/pins.json ("" when neither is set).
std::string default_pins_path();

}  // namespace toolport::stores
