// The declaration of configuration keys: each key once, as data — its name, type, range
// or allowed values, default (as documentation text), one line of documentation, the
// environment variable that may set it, and whether it is a secret that may be given as
// `<name>_env: VAR` instead. Sections are named tables of keys and nest.
//
// From these declarations: the reader's checks (unknown keys with "did you mean", types,
// ranges, allowed values: settings.hpp), the JSON Schema of the file (`toolport config
// schema`: schema.hpp) and docs/configuration.md (`toolport config docs`: docs.hpp).
// Reading code names a key by its declaration (a `const Key&`), never by a re-typed string.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::config {

struct Section;

enum class Type {
    string,
    integer,
    number,
    boolean,
    string_list,
    string_map,      // name → string (e.g. headers)
    one_of,          // a string of `values`
    duration,        // an integer count of `unit` ("ms" or "s"), within the range
    section,         // a nested mapping: `section`
    named_sections,  // a mapping of names (chosen by the user) to `section`
    section_list,    // a list of `section`s, in an order that matters (access rules)
    any,             // a value the reader passes on as written (templates, schemas)
};

// How a secret may be given.
enum class Secret {
    no,
    inline_or_env,  // `name: value` or `name_env: VAR` (not both)
    env_only,       // only `name_env: VAR`
};

struct Key {
    std::string name;
    Type type = Type::string;
    std::string doc;           // one line
    std::string default_text;  // documentation only ("" when there is none)
    // integer, number, duration: the accepted range (inclusive).
    double min = 0;
    double max = 0;
    bool ranged = false;
    std::vector<std::string> values;  // one_of: the accepted values, in the order the error lists them
    // one_of: the refusal quotes the value given (`must be a, b or c, got "x"`).
    bool echo_value = false;
    std::string unit;  // duration: "ms" or "s"
    std::string env;   // an environment variable that sets this key over the file
    Secret secret = Secret::no;
    const Section* section = nullptr;  // section and named_sections: the entries' table
    // The key may also be written as a plain string (e.g. `store: redis://...` for the
    // `store:` section's url).
    bool also_string = false;
    // section: may also be written empty (`introspection:` alone).
    bool nullable = false;
    // When the declaration alone cannot say what the file accepts (a list or a mapping, as
    // `packs:`): the JSON Schema fragment, written by hand.
    std::function<nlohmann::json()> schema;

    // The names this key may be written under (`name`, `name_env`).
    std::vector<std::string> spellings() const;
};

struct Section {
    std::string name;  // as written in the file ("" for the file itself)
    std::string doc;
    std::vector<const Key*> keys;
    // Keys outside `keys` are refused (the reader says which ones it expected).
    bool closed = true;
    // The unknown-key refusal lists the keys in name order (the file's own sections) or in
    // declaration order (the sources' sections, as they always did).
    bool list_sorted = false;

    const Key* find(const std::string& name) const;
    // Every accepted spelling of every key, in the order the refusal lists them.
    std::vector<std::string> spellings() const;
};

// Helpers that read like a table.
Key string_key(std::string name, std::string doc, std::string default_text = {});
Key integer_key(std::string name, double min, double max, std::string doc, std::string default_text = {});
Key number_key(std::string name, double min, double max, std::string doc, std::string default_text = {});
Key boolean_key(std::string name, std::string doc, std::string default_text = {});
Key list_key(std::string name, std::string doc, std::string default_text = {});
Key map_key(std::string name, std::string doc);
Key one_of_key(std::string name, std::vector<std::string> values, std::string doc, std::string default_text = {});
Key duration_key(std::string name, std::string unit, double min, double max, std::string doc,
                 std::string default_text = {});
Key section_key(std::string name, const Section& section, std::string doc);
Key named_sections_key(std::string name, const Section& section, std::string doc);
Key section_list_key(std::string name, const Section& section, std::string doc);
Key any_key(std::string name, std::string doc);

// Modifiers: `with_env(integer_key(...), "MAX_...")`.
Key with_env(Key key, std::string env);
Key as_secret(Key key, Secret secret);

}  // namespace toolport::config
