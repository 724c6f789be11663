// Spec and suite files -> Spec values, with every problem named by file, line and key.
//
// Files are parsed into a Document (JSON plus lines, document/document.hpp) and checked here as JSON,
// the way mcp-server-kit's zod schemas check them, but strictly: unknown keys are errors
// (the kit drops them silently, which hides typos such as `messageContain`).
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "spec/assertions/assertion_type.hpp"
#include "document/document.hpp"
#include "spec/spec.hpp"
#include "util/sanitize.hpp"
#include "util/ascii.hpp"

namespace toolport::spec {

namespace fs = std::filesystem;
using document::Document;
using document::DocumentError;

namespace {

// The longest timeout a spec may ask for (a day), so that it always fits the clocks.
constexpr double kMaxTimeoutMs = 86'400'000;

// File names as the user gave them, with home directories hidden.
std::string display(const fs::path& file) { return util::sanitize_for_message(file.string(), 1000); }

const char* kind_name(const Json& value) {
    switch (value.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::boolean: return "a boolean";
        case Json::value_t::string: return "a string";
        case Json::value_t::array: return "a list";
        case Json::value_t::object: return "a mapping";
        default: return value.is_number() ? "a number" : "a value";
    }
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

// Collects the problems of one spec (or suite), each as "FILE:LINE: KEY: what".
class Checker {
public:
    Checker(const Document& doc, const fs::path& file) : doc_(doc), file_(file) {}

    void problem(const std::string& pointer, const std::string& key, const std::string& what) {
        int line = doc_.line_of(pointer);
        std::string where = line > 0 ? fmt::format("{}:{}", display(file_), line) : display(file_);
        problems_.push_back(key.empty() ? fmt::format("{}: {}", where, what)
                                        : fmt::format("{}: {}: {}", where, key, what));
    }
    const std::vector<std::string>& problems() const { return problems_; }
    bool ok() const { return problems_.empty(); }

    // Reports keys of `object` outside `allowed`.
    void only_keys(const Json& object, const std::string& pointer, const std::string& prefix,
                   const std::vector<std::string>& allowed, const std::string& what) {
        for (const auto& [key, value] : object.items()) {
            if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
                problem(document::pointer_append(pointer, key), prefix + key,
                        fmt::format("unknown key for {} (expected one of: {})", what, join(allowed)));
            }
        }
    }

    // A string member; `required` ones must be present and non-empty.
    std::optional<std::string> string(const Json& object, const std::string& pointer, const std::string& prefix,
                                      const std::string& key, bool required, bool non_empty) {
        auto it = object.find(key);
        std::string member = document::pointer_append(pointer, key);
        if (it == object.end()) {
            if (required) problem(pointer, prefix + key, "is required");
            return std::nullopt;
        }
        if (!it->is_string()) {
            problem(member, prefix + key, fmt::format("must be a string, got {}", kind_name(*it)));
            return std::nullopt;
        }
        if (non_empty && it->get_ref<const std::string&>().empty()) {
            problem(member, prefix + key, "must not be empty");
            return std::nullopt;
        }
        return it->get<std::string>();
    }

    std::optional<bool> boolean(const Json& object, const std::string& pointer, const std::string& prefix,
                                const std::string& key) {
        auto it = object.find(key);
        if (it == object.end()) return std::nullopt;
        if (!it->is_boolean()) {
            problem(document::pointer_append(pointer, key), prefix + key,
                    fmt::format("must be true or false, got {}", kind_name(*it)));
            return std::nullopt;
        }
        return it->get<bool>();
    }

private:
    const Document& doc_;
    fs::path file_;
    std::vector<std::string> problems_;
};

bool field_has_kind(const Json& value, detail::FieldKind kind) {
    switch (kind) {
        case detail::FieldKind::string: return value.is_string();
        case detail::FieldKind::boolean: return value.is_boolean();
        case detail::FieldKind::positive_number: return value.is_number() && value.get<double>() > 0;
        case detail::FieldKind::string_list:
            return value.is_array() &&
                   std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); });
        case detail::FieldKind::any: return true;
    }
    return false;
}

const char* field_kind_text(detail::FieldKind kind) {
    switch (kind) {
        case detail::FieldKind::string: return "a string";
        case detail::FieldKind::boolean: return "true or false";
        case detail::FieldKind::positive_number: return "a number greater than 0";
        case detail::FieldKind::string_list: return "a list of strings";
        case detail::FieldKind::any: return "any value";
    }
    return "a value";
}

std::optional<Assertion> read_assertion(Checker& check, const Json& item, const std::string& pointer,
                                        const std::string& prefix) {
    if (!item.is_object()) {
        check.problem(pointer, prefix.substr(0, prefix.size() - 1),
                      fmt::format("an assertion must be a mapping with a type, got {}", kind_name(item)));
        return std::nullopt;
    }
    auto type_name = check.string(item, pointer, prefix, "type", true, true);
    if (!type_name) return std::nullopt;
    const detail::AssertionType* type = detail::find_assertion_type(*type_name);
    if (!type) {
        check.problem(document::pointer_append(pointer, "type"), prefix + "type",
                      fmt::format("unknown assertion type \"{}\" (known: {})", *type_name,
                                  detail::assertion_type_names()));
        return std::nullopt;
    }
    std::vector<std::string> allowed{"type"};
    for (const auto& field : type->fields) allowed.push_back(field.key);
    std::size_t before = check.problems().size();
    check.only_keys(item, pointer, prefix, allowed, fmt::format("the {} assertion", type->name));
    for (const auto& field : type->fields) {
        auto it = item.find(field.key);
        if (it == item.end()) {
            if (field.required)
                check.problem(pointer, prefix + field.key, fmt::format("is required by {}", type->name));
        } else if (!field_has_kind(*it, field.kind)) {
            check.problem(document::pointer_append(pointer, field.key), prefix + field.key,
                          fmt::format("must be {}, got {}", field_kind_text(field.kind),
                                      it->is_number() ? it->dump() : kind_name(*it)));
        }
    }
    if (check.problems().size() != before) return std::nullopt;
    Assertion assertion{type->name, item};
    assertion.params.erase("type");
    if (type->validate) {
        if (auto bad = type->validate(assertion.params)) {
            check.problem(document::pointer_append(pointer, bad->key), prefix + bad->key, bad->message);
            return std::nullopt;
        }
    }
    return assertion;
}

// Reads the spec at `pointer` of `doc` (the whole file, or a suite's inline entry).
// `prefix` is how its keys are named in messages: "" or "tests[2].".
std::variant<Spec, LoadError> read_spec(const Document& doc, const std::string& pointer, const std::string& prefix,
                                        const fs::path& file, const fs::path& folder, const std::string& label) {
    Checker check(doc, file);
    const Json& value = pointer.empty() ? doc.value : doc.value.at(Json::json_pointer(pointer));
    Spec spec;
    spec.file = file;
    spec.folder = folder;
    if (!value.is_object()) {
        check.problem(pointer, prefix.empty() ? "" : prefix.substr(0, prefix.size() - 1),
                      fmt::format("a spec must be a mapping (name, tool, arguments, assertions, ...), got {}",
                                  kind_name(value)));
        return LoadError{file, label, check.problems()};
    }
    if (auto name = check.string(value, pointer, prefix, "name", true, true)) spec.name = *name;
    if (auto description = check.string(value, pointer, prefix, "description", false, false)) {
        spec.description = *description;
    }

    // The kind: `type`, or a tool spec written before the kit had prompt and resource specs.
    std::optional<SpecKind> kind;
    if (value.contains("type")) {
        if (auto type = check.string(value, pointer, prefix, "type", true, false)) {
            if (*type == "tool") kind = SpecKind::tool;
            else if (*type == "prompt") kind = SpecKind::prompt;
            else if (*type == "resource") kind = SpecKind::resource;
            else
                check.problem(document::pointer_append(pointer, "type"), prefix + "type",
                              fmt::format("must be tool, prompt or resource, got \"{}\"", *type));
        }
    } else if (value.contains("tool")) {
        kind = SpecKind::tool;
    } else {
        check.problem(pointer, prefix + "type",
                      "is required (tool, prompt or resource); it may be left out only when the spec has tool:");
    }

    std::vector<std::string> allowed{"name", "description", "type", "assertions", "timeout", "skip", "only"};
    if (kind) {
        spec.kind = *kind;
        const char* target_key = *kind == SpecKind::tool ? "tool" : *kind == SpecKind::prompt ? "prompt" : "uri";
        allowed.push_back(target_key);
        if (*kind != SpecKind::resource) allowed.push_back("arguments");
        check.only_keys(value, pointer, prefix, allowed, fmt::format("a {} spec", to_string(*kind)));
        if (auto target = check.string(value, pointer, prefix, target_key, true, true)) spec.target = *target;
        if (*kind != SpecKind::resource) {
            auto args = value.find("arguments");
            if (args == value.end()) {
                if (*kind == SpecKind::tool) {
                    check.problem(pointer, prefix + "arguments", "is required for a tool spec (use {} for none)");
                }
            } else if (!args->is_object()) {
                check.problem(document::pointer_append(pointer, "arguments"), prefix + "arguments",
                              fmt::format("must be a mapping of argument names to values, got {}", kind_name(*args)));
            } else {
                spec.arguments = *args;
            }
        }
    }

    if (auto timeout = value.find("timeout"); timeout != value.end()) {
        if (!timeout->is_number() || timeout->get<double>() <= 0 || timeout->get<double>() > kMaxTimeoutMs) {
            check.problem(document::pointer_append(pointer, "timeout"), prefix + "timeout",
                          fmt::format("must be a number of milliseconds greater than 0 and at most {}, got {}",
                                      kMaxTimeoutMs, timeout->is_number() ? timeout->dump() : kind_name(*timeout)));
        } else {
            spec.timeout = std::chrono::milliseconds(static_cast<long long>(std::ceil(timeout->get<double>())));
        }
    }
    if (auto skip = check.boolean(value, pointer, prefix, "skip")) spec.skip = *skip;
    if (auto only = check.boolean(value, pointer, prefix, "only")) spec.only = *only;

    std::string assertions_pointer = document::pointer_append(pointer, "assertions");
    auto assertions = value.find("assertions");
    if (assertions == value.end()) {
        check.problem(pointer, prefix + "assertions", "is required (a list of at least one assertion)");
    } else if (!assertions->is_array() || assertions->empty()) {
        check.problem(assertions_pointer, prefix + "assertions",
                      fmt::format("must be a list of at least one assertion, got {}",
                                  assertions->is_array() ? "an empty list" : kind_name(*assertions)));
    } else {
        for (std::size_t i = 0; i < assertions->size(); ++i) {
            auto item_prefix = fmt::format("{}assertions[{}]", prefix, i);
            auto read = read_assertion(check, (*assertions)[i], document::pointer_append(assertions_pointer, i),
                                       item_prefix + ".");
            if (read) spec.assertions.push_back(std::move(*read));
        }
    }

    if (!check.ok()) return LoadError{file, spec.name.empty() ? label : spec.name, check.problems()};
    return spec;
}

struct Parsed {
    std::optional<Document> doc;
    std::optional<LoadError> error;
    bool is_suite() const { return doc && doc->value.is_object() && doc->value.contains("tests"); }
};

Parsed parse_file(const fs::path& file) {
    Parsed parsed;
    try {
        parsed.doc = document::parse_document(document::read_text_file(file), file);
        if (parsed.doc->value.is_null())
            parsed.error = LoadError{file, display(file), {display(file) + ": the file is empty"}};
    } catch (const DocumentError& e) {
        std::string where = e.line() > 0 ? fmt::format("{}:{}", display(file), e.line()) : display(file);
        parsed.error = LoadError{file, display(file), {fmt::format("{}: {}", where, e.what())}};
    }
    return parsed;
}

fs::path canonical_or_same(const fs::path& path) {
    std::error_code ec;
    auto canonical = fs::weakly_canonical(path, ec);
    return ec ? path : canonical;
}

bool is_http_url(const std::string& url) {
    for (const char* scheme : {"http://", "https://"}) {
        std::string_view s(scheme);
        if (url.size() > s.size() && url.compare(0, s.size(), s) == 0) return true;
    }
    return false;
}

class Loader {
public:
    LoadedSpecs run(const std::vector<fs::path>& files) {
        // A spec file listed by a suite runs as part of that suite only.
        std::set<fs::path> in_suites;
        std::vector<Parsed> parsed;
        for (const auto& file : files) {
            parsed.push_back(parse_file(file));
            if (!parsed.back().is_suite()) continue;
            const Json& tests = parsed.back().doc->value["tests"];
            if (!tests.is_array()) continue;
            for (const auto& entry : tests) {
                if (entry.is_string())
                    in_suites.insert(canonical_or_same(file.parent_path() / entry.get<std::string>()));
            }
        }
        for (std::size_t i = 0; i < files.size(); ++i) {
            const Parsed& p = parsed[i];
            if (p.error) {
                out_.entries.emplace_back(*p.error);
            } else if (p.is_suite()) {
                load_suite(*p.doc, files[i]);
            } else if (!in_suites.count(canonical_or_same(files[i]))) {
                out_.entries.push_back(read_spec(*p.doc, "", "", files[i], files[i].parent_path(), display(files[i])));
            }
        }
        return std::move(out_);
    }

    LoadedSpecs run_text(const std::string& text, const fs::path& file) {
        Parsed p;
        try {
            p.doc = document::parse_document(text, file);
            if (p.doc->value.is_null())
                p.error = LoadError{file, display(file), {display(file) + ": the file is empty"}};
        } catch (const DocumentError& e) {
            std::string where = e.line() > 0 ? fmt::format("{}:{}", display(file), e.line()) : display(file);
            p.error = LoadError{file, display(file), {fmt::format("{}: {}", where, e.what())}};
        }
        if (p.error) out_.entries.emplace_back(*p.error);
        else if (p.is_suite()) load_suite(*p.doc, file);
        else out_.entries.push_back(read_spec(*p.doc, "", "", file, file.parent_path(), display(file)));
        return std::move(out_);
    }

private:
    void load_suite(const Document& doc, const fs::path& file) {
        Checker check(doc, file);
        const Json& suite = doc.value;
        check.only_keys(suite, "", "", {"name", "description", "tests", "setup"}, "a suite");
        std::string name = check.string(suite, "", "", "name", true, true).value_or("");
        check.string(suite, "", "", "description", false, false);
        std::string server_url;
        if (auto setup = suite.find("setup"); setup != suite.end()) {
            if (!setup->is_object()) {
                check.problem("/setup", "setup", fmt::format("must be a mapping, got {}", kind_name(*setup)));
            } else {
                check.only_keys(*setup, "/setup", "setup.", {"serverUrl"}, "a suite's setup");
                if (auto url = check.string(*setup, "/setup", "setup.", "serverUrl", false, true)) {
                    if (is_http_url(*url)) server_url = *url;
                    else
                        check.problem("/setup/serverUrl", "setup.serverUrl",
                                      fmt::format("must be an http:// or https:// URL, got \"{}\"", *url));
                }
            }
        }
        const Json& tests = suite.at("tests");
        if (!tests.is_array())
            check.problem("/tests", "tests", fmt::format("must be a list, got {}", kind_name(tests)));
        if (!check.ok())
            out_.entries.emplace_back(LoadError{file, name.empty() ? display(file) : name, check.problems()});
        if (!tests.is_array()) return;

        fs::path folder = file.parent_path();
        for (std::size_t i = 0; i < tests.size(); ++i) {
            const Json& entry = tests[i];
            std::string pointer = document::pointer_append("/tests", i);
            std::string label = fmt::format("{} tests[{}]", display(file), i);
            std::variant<Spec, LoadError> loaded;
            if (entry.is_string()) {
                loaded = load_referenced(doc, file, pointer, i, folder / entry.get<std::string>());
            } else if (entry.is_object()) {
                loaded = read_spec(doc, pointer, fmt::format("tests[{}].", i), file, folder, label);
            } else {
                Checker entry_check(doc, file);
                entry_check.problem(pointer, fmt::format("tests[{}]", i),
                                    fmt::format("must be a spec file path or an inline spec, got {}", kind_name(entry)));
                loaded = LoadError{file, label, entry_check.problems()};
            }
            if (auto* spec = std::get_if<Spec>(&loaded)) {
                spec->suite = name;
                spec->server_url = server_url;
            }
            out_.entries.push_back(std::move(loaded));
        }
    }

    std::variant<Spec, LoadError> load_referenced(const Document& suite_doc, const fs::path& suite_file,
                                                  const std::string& pointer, std::size_t index, const fs::path& file) {
        Parsed p = parse_file(file);
        if (p.error) {
            // Say which suite entry led here: the file itself may simply be missing.
            Checker check(suite_doc, suite_file);
            check.problem(pointer, fmt::format("tests[{}]", index), p.error->problems.front());
            return LoadError{file, display(file), check.problems()};
        }
        if (p.is_suite()) {
            Checker check(suite_doc, suite_file);
            check.problem(pointer, fmt::format("tests[{}]", index),
                          fmt::format("{} is a suite; a suite may list spec files only", display(file)));
            return LoadError{file, display(file), check.problems()};
        }
        return read_spec(*p.doc, "", "", file, file.parent_path(), display(file));
    }

    LoadedSpecs out_;
};

bool has_spec_extension(const fs::path& path) {
    const std::string ext = util::to_lower_ascii(path.extension().string());
    return ext == ".yaml" || ext == ".yml";
}

}  // namespace

const char* to_string(SpecKind kind) {
    switch (kind) {
        case SpecKind::tool: return "tool";
        case SpecKind::prompt: return "prompt";
        case SpecKind::resource: return "resource";
    }
    return "tool";
}

std::size_t LoadedSpecs::spec_count() const {
    return static_cast<std::size_t>(
        std::count_if(entries.begin(), entries.end(), [](const auto& e) { return std::holds_alternative<Spec>(e); }));
}

CollectedFiles collect_spec_files(const std::vector<fs::path>& paths) {
    CollectedFiles collected;
    for (const auto& path : paths) {
        std::error_code ec;
        auto status = fs::status(path, ec);
        if (ec || !fs::exists(status)) {
            collected.errors.push_back(LoadError{path, display(path), {display(path) + ": no such file or folder"}});
            continue;
        }
        if (!fs::is_directory(status)) {
            collected.files.push_back(path);
            continue;
        }
        std::vector<fs::path> found;
        fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
        for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            const auto& name = it->path().filename().string();
            if (it->is_directory(ec)) {
                if (name.starts_with(".") || name == "__snapshots__" || name == "node_modules")
                    it.disable_recursion_pending();
                continue;
            }
            if (it->is_regular_file(ec) && has_spec_extension(it->path())) found.push_back(it->path());
        }
        if (ec)
            collected.errors.push_back(
                LoadError{path, display(path), {display(path) + ": cannot be listed: " + ec.message()}});
        std::sort(found.begin(), found.end());
        collected.files.insert(collected.files.end(), found.begin(), found.end());
    }
    return collected;
}

LoadedSpecs load_spec_files(const std::vector<fs::path>& files) { return Loader().run(files); }

LoadedSpecs load_spec_files(const CollectedFiles& collected) {
    LoadedSpecs loaded;
    for (const auto& error : collected.errors) loaded.entries.emplace_back(error);
    auto rest = load_spec_files(collected.files);
    for (auto& entry : rest.entries) loaded.entries.push_back(std::move(entry));
    return loaded;
}

LoadedSpecs load_spec_text(const std::string& text, const fs::path& file) { return Loader().run_text(text, file); }

}  // namespace toolport::spec
