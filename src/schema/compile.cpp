// Schema compilation: indexing identifiers, resolving references, building Nodes.
//
// Compilation runs in two phases, because a $ref may point anywhere (forward, backward, into
// another document, into a subschema with its own $id):
//
//  1. Indexing walks each document once, through the keywords that hold subschemas in its
//     dialect, and records for every subschema its base URI, dialect and resource, and for
//     every "$id", "$anchor" and "$dynamicAnchor" the URI it defines. Values of other
//     keywords ("enum", "const", unknown keywords) are not walked: an "$id" inside them is
//     data, not an identifier. Documents referenced by URI are indexed when first needed,
//     from Options::documents or the built-in meta-schemas, never from the network.
//
//  2. Node building turns schema objects into Nodes from a work list (not recursion, so long
//     $ref chains cannot exhaust the stack), memoized by the address of the JSON value: each
//     subschema becomes exactly one Node however many references reach it, and reference
//     cycles become pointer cycles instead of infinite compilation.
//
// The dialect decides which keywords exist: draft-07 ignores every sibling of "$ref"; a
// 2020-12 dialect enables the vocabularies its meta-schema lists in "$vocabulary".

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "schema/internal.hpp"
#include "schema/uri.hpp"
#include "util/json_pointer.hpp"

namespace toolport::schema {
namespace detail {
namespace {

constexpr const char* kDraft7Uri = "http://json-schema.org/draft-07/schema";
constexpr const char* kDraft7UriHttps = "https://json-schema.org/draft-07/schema";
constexpr const char* kDraft202012Uri = "https://json-schema.org/draft/2020-12/schema";
constexpr std::size_t kMaxSchemaNesting = 512;  // nested subschemas
// JSON nesting of a whole document (subschemas, but also "enum"/"const" values and unknown
// keywords). Copying, comparing and dumping JSON recurse, so deeper documents are refused
// before they are copied.
constexpr std::size_t kMaxDocumentNesting = 2048;

constexpr std::uint16_t kDefault202012Vocabularies = kVocabCore | kVocabApplicator | kVocabUnevaluated |
                                                     kVocabValidation | kVocabMetaData | kVocabFormatAnnotation |
                                                     kVocabContent;

struct DialectInfo {
    Dialect draft = Dialect::draft2020_12;
    std::uint16_t vocabularies = kDefault202012Vocabularies;

    bool draft7() const { return draft == Dialect::draft7; }
    bool has(Vocabulary v) const { return draft7() || (vocabularies & v) != 0; }
};

DialectInfo draft7_dialect() { return {Dialect::draft7, 0xFFFF}; }
DialectInfo draft202012_dialect() { return {Dialect::draft2020_12, kDefault202012Vocabularies}; }
DialectInfo dialect_of(Dialect d) { return d == Dialect::draft7 ? draft7_dialect() : draft202012_dialect(); }

std::uint16_t vocabulary_bit(const std::string& uri) {
    static const std::pair<const char*, Vocabulary> known[] = {
        {"https://json-schema.org/draft/2020-12/vocab/core", kVocabCore},
        {"https://json-schema.org/draft/2020-12/vocab/applicator", kVocabApplicator},
        {"https://json-schema.org/draft/2020-12/vocab/unevaluated", kVocabUnevaluated},
        {"https://json-schema.org/draft/2020-12/vocab/validation", kVocabValidation},
        {"https://json-schema.org/draft/2020-12/vocab/meta-data", kVocabMetaData},
        {"https://json-schema.org/draft/2020-12/vocab/format-annotation", kVocabFormatAnnotation},
        {"https://json-schema.org/draft/2020-12/vocab/format-assertion", kVocabFormatAssertion},
        {"https://json-schema.org/draft/2020-12/vocab/content", kVocabContent},
    };
    for (const auto& [u, bit] : known) {
        if (uri == u) return bit;
    }
    return 0;
}

// What indexing learned about one subschema.
struct Location {
    std::string base;     // base URI for the subschema's own keywords (after its "$id")
    std::string doc;      // the document, for error messages ("" for the root schema)
    std::string pointer;  // JSON Pointer from the document root, for error messages
    DialectInfo dialect;
    Resource* resource = nullptr;

    std::string where() const { return doc + "#" + pointer; }
};

std::string pointer_append(const std::string& pointer, std::string_view token) {
    std::string out = pointer;
    out += '/';
    util::append_pointer_token(out, token);
    return out;
}

bool is_plain_name(std::string_view s) {
    // 2020-12 anchors: NCName-like, ^[A-Za-z_][-A-Za-z0-9._]*$
    if (s.empty()) return false;
    auto head = static_cast<unsigned char>(s[0]);
    if (!(std::isalpha(head) || head == '_')) return false;
    for (char c : s.substr(1)) {
        auto u = static_cast<unsigned char>(c);
        if (!(std::isalnum(u) || c == '-' || c == '.' || c == '_')) return false;
    }
    return true;
}

class Compiler {
public:
    Compiler(Options options, Program& program) : options_(std::move(options)), program_(program) {
        for (auto& [uri, doc] : options_.documents) {
            std::string key = strip_empty_fragment(uri);
            user_documents_.emplace(key, &doc);
            // A document is also known by the "$id" at its root (resolved against its key).
            if (auto id = doc.is_object() ? doc.find("$id") : doc.end();
                doc.is_object() && id != doc.end() && id->is_string()) {
                user_documents_by_id_.emplace(split_fragment(resolve_uri(key, id->get<std::string>())).uri, key);
            }
        }
    }

    void run(const Json& schema) {
        check_nesting(schema, "the schema");
        const Json& root = program_.documents.emplace_back(schema);
        root_dialect_ = dialect_of(options_.default_dialect);
        if (root.is_object()) {
            if (auto it = root.find("$schema"); it != root.end()) root_dialect_ = dialect_for(*it, "#");
        }
        std::string base = strip_empty_fragment(options_.base_uri);
        if (!is_absolute_uri(base)) throw SchemaError("Options::base_uri must be an absolute URI: '" + base + "'");
        index_document(root, base, root_dialect_);
        program_.dialect = root_dialect_.draft;
        program_.max_errors = options_.max_errors;
        program_.max_depth = options_.max_depth;
        program_.root = node_for(&root);
        drain();
        link_dynamic_anchors();
    }

private:
    // ---- Phase 1: indexing ---------------------------------------------------------------

    void index_document(const Json& doc, const std::string& retrieval_uri, DialectInfo inherited) {
        resources_by_uri_.emplace(retrieval_uri, &doc);
        std::string where = retrieval_uri == strip_empty_fragment(options_.base_uri) ? "" : retrieval_uri;
        index(doc, retrieval_uri, inherited, nullptr, where, "", true, 0);
    }

    static void check_nesting(const Json& document, const std::string& what) {
        if (nesting_exceeds(document, kMaxDocumentNesting)) {
            throw SchemaError(what + " nests arrays/objects more than " + std::to_string(kMaxDocumentNesting) +
                              " levels deep");
        }
    }

    Resource* new_resource(const std::string& uri) {
        Resource& r = program_.resources.emplace_back();
        r.uri = uri;
        return &r;
    }

    [[noreturn]] void fail(const std::string& where, const std::string& pointer, const std::string& what) {
        throw SchemaError("invalid schema at " + where + "#" + pointer + ": " + what);
    }

    void index(const Json& s, std::string base, DialectInfo d, Resource* resource, const std::string& doc,
               const std::string& pointer, bool document_root, std::size_t depth) {
        if (depth > kMaxSchemaNesting) {
            fail(doc, pointer, "schema nesting exceeds " + std::to_string(kMaxSchemaNesting) + " levels");
        }
        if (locations_.count(&s) != 0) return;
        if (!s.is_object()) {
            if (resource == nullptr) resource = new_resource(base);
            // Booleans are schemas; anything else is reported if it is ever compiled as one.
            locations_.emplace(&s, Location{base, doc, pointer, d, resource});
            return;
        }
        if (auto it = s.find("$schema"); it != s.end() && (document_root || s.contains("$id"))) {
            d = dialect_for(*it, doc + "#" + pointer);
        }
        // draft-07: "All other properties in a "$ref" object MUST be ignored", "$id" included.
        const bool ref_only = d.draft7() && s.contains("$ref");
        if (auto it = s.find("$id"); it != s.end() && !ref_only) {
            if (!it->is_string()) fail(doc, pointer, "$id must be a string");
            UriAndFragment id = split_fragment(resolve_uri(base, it->get<std::string>()));
            if (!d.draft7() && !id.fragment.empty()) {
                fail(doc, pointer, "$id must not contain a fragment (use $anchor): '" + it->get<std::string>() + "'");
            }
            if (id.uri != base || resource == nullptr) {
                base = id.uri;
                resource = new_resource(base);
                resources_by_uri_.emplace(base, &s);
            }
            if (d.draft7() && !id.fragment.empty() && id.fragment[0] != '/') {
                anchors_.emplace(base + "#" + id.fragment, &s);  // draft-07 location-independent id
            }
        }
        if (resource == nullptr) resource = new_resource(base);
        if (!d.draft7() && !ref_only) {
            for (const char* keyword : {"$anchor", "$dynamicAnchor"}) {
                auto it = s.find(keyword);
                if (it == s.end()) continue;
                if (!it->is_string() || !is_plain_name(it->get_ref<const std::string&>())) {
                    fail(doc, pointer,
                         std::string(keyword) + " must be a plain name matching ^[A-Za-z_][-A-Za-z0-9._]*$");
                }
                const std::string& name = it->get_ref<const std::string&>();
                anchors_.emplace(base + "#" + name, &s);
                if (keyword[1] == 'd') dynamic_anchor_sources_.push_back({resource, name, &s});
            }
        }
        locations_.emplace(&s, Location{base, doc, pointer, d, resource});
        for_each_subschema(s, d, [&](const Json& child, const std::string& child_pointer) {
            index(child, base, d, resource, doc, pointer + child_pointer, false, depth + 1);
        });
    }

    // Calls fn(subschema, pointer suffix) for every subschema of `s` in dialect `d`. Draft-07
    // forms ("definitions", "dependencies", array "items") are also walked in 2020-12, where
    // Toolport accepts them for compatibility.
    template <typename Fn>
    static void for_each_subschema(const Json& s, const DialectInfo& d, Fn&& fn) {
        auto single = [&](const char* k) {
            if (auto it = s.find(k); it != s.end() && (it->is_object() || it->is_boolean())) {
                fn(*it, "/" + std::string(k));
            }
        };
        auto array = [&](const char* k) {
            if (auto it = s.find(k); it != s.end() && it->is_array()) {
                for (std::size_t i = 0; i < it->size(); ++i)
                    fn((*it)[i], "/" + std::string(k) + "/" + std::to_string(i));
            }
        };
        auto map = [&](const char* k) {
            if (auto it = s.find(k); it != s.end() && it->is_object()) {
                for (auto m = it->begin(); m != it->end(); ++m) {
                    if (m->is_object() || m->is_boolean()) fn(*m, pointer_append("/" + std::string(k), m.key()));
                }
            }
        };
        for (const char* k :
             {"additionalProperties", "contains", "propertyNames", "if", "then", "else", "not", "items"}) {
            single(k);
        }
        for (const char* k : {"allOf", "anyOf", "oneOf", "items"}) array(k);
        for (const char* k : {"definitions", "properties", "patternProperties", "dependencies"}) map(k);
        single("additionalItems");
        if (!d.draft7()) {
            for (const char* k : {"unevaluatedItems", "unevaluatedProperties"}) single(k);
            array("prefixItems");
            for (const char* k : {"$defs", "dependentSchemas"}) map(k);
        }
    }

    // The dialect a "$schema" value selects.
    DialectInfo dialect_for(const Json& value, const std::string& where) {
        if (!value.is_string()) throw SchemaError("invalid schema at " + where + ": $schema must be a string");
        std::string uri = strip_empty_fragment(value.get<std::string>());
        if (uri == kDraft7Uri || uri == kDraft7UriHttps) return draft7_dialect();
        if (uri == kDraft202012Uri) return draft202012_dialect();
        if (auto it = dialects_.find(uri); it != dialects_.end()) return it->second;
        if (!dialects_in_progress_.insert(uri).second) {
            throw SchemaError("meta-schema '" + uri + "' declares itself (directly or not) as its own $schema");
        }
        const Json* meta = find_document_for_dialect(uri);
        DialectInfo result = dialect_of(options_.default_dialect);
        if (meta == nullptr) {
            if (options_.reject_unknown_dialect) {
                throw SchemaError("unsupported $schema '" + value.get<std::string>() + "' at " + where +
                                  ": Toolport validates draft-07 (" + kDraft7Uri + "#) and 2020-12 (" +
                                  kDraft202012Uri + "); a custom meta-schema must be registered in Options::documents");
            }
        } else if (auto voc = meta->find("$vocabulary"); meta->is_object() && voc != meta->end() && voc->is_object()) {
            result = DialectInfo{Dialect::draft2020_12, kVocabCore};
            for (auto it = voc->begin(); it != voc->end(); ++it) {
                std::uint16_t bit = vocabulary_bit(it.key());
                if (bit != 0) {
                    result.vocabularies |= bit;
                } else if (it->is_boolean() && it->get<bool>()) {
                    throw SchemaError("meta-schema '" + uri + "' requires vocabulary '" + it.key() +
                                      "', which Toolport does not support");
                }
            }
        } else if (auto sch = meta->is_object() ? meta->find("$schema") : meta->end();
                   meta->is_object() && sch != meta->end()) {
            result = dialect_for(*sch, uri);
        }
        dialects_in_progress_.erase(uri);
        dialects_.emplace(uri, result);
        return result;
    }

    const Json* find_document_for_dialect(const std::string& uri) {
        if (auto it = resources_by_uri_.find(uri); it != resources_by_uri_.end()) return it->second;
        if (auto it = user_documents_.find(uri); it != user_documents_.end()) return it->second;
        for (const auto& b : builtin_documents()) {
            if (b.uri == uri) return &b.document;
        }
        return nullptr;
    }

    // The resource (document or "$id" subschema) with this absolute URI, loading a registered
    // document on first use.
    const Json* find_resource(const std::string& uri) {
        if (auto it = resources_by_uri_.find(uri); it != resources_by_uri_.end()) return it->second;
        const Json* source = nullptr;
        if (auto it = user_documents_.find(uri); it != user_documents_.end()) {
            source = it->second;
        } else {
            for (const auto& b : builtin_documents()) {
                if (b.uri == uri) source = &b.document;
            }
        }
        if (source == nullptr) {
            // Registered under another URI but identified by this one: load it by its key, which
            // indexes its "$id" too.
            if (auto it = user_documents_by_id_.find(uri); it != user_documents_by_id_.end() && it->second != uri) {
                find_resource(it->second);
                auto found = resources_by_uri_.find(uri);
                return found == resources_by_uri_.end() ? nullptr : found->second;
            }
            return nullptr;
        }
        check_nesting(*source, "document '" + uri + "'");
        const Json& doc = program_.documents.emplace_back(*source);
        DialectInfo d = root_dialect_;
        if (doc.is_object()) {
            if (auto it = doc.find("$schema"); it != doc.end()) d = dialect_for(*it, uri);
        }
        index_document(doc, uri, d);
        return &doc;
    }

    // ---- Phase 2: nodes ------------------------------------------------------------------

    const Node* node_for(const Json* s) {
        if (auto it = nodes_.find(s); it != nodes_.end()) return it->second;
        Node* n = &program_.nodes.emplace_back();
        nodes_.emplace(s, n);
        pending_.emplace_back(s, n);
        return n;
    }

    void drain() {
        while (!pending_.empty()) {
            auto [json, node] = pending_.back();
            pending_.pop_back();
            build(*json, *node);
        }
    }

    // Every resource that validation might enter can be the target of a $dynamicRef that
    // consults the dynamic scope, so its $dynamicAnchors need Nodes too. Compiling them may
    // load further documents with further anchors; iterate until nothing is left.
    void link_dynamic_anchors() {
        if (!uses_dynamic_scope_) return;
        for (std::size_t i = 0; i < dynamic_anchor_sources_.size(); ++i) {
            auto [resource, name, json] = dynamic_anchor_sources_[i];
            resource->dynamic_anchors.emplace_back(name, node_for(json));
            drain();
        }
    }

    struct Target {
        const Json* json = nullptr;
        std::string fragment;
        bool pointer = false;
    };

    Target resolve_reference(const Json& value, const Location& loc, const char* keyword) {
        if (!value.is_string())
            throw SchemaError("invalid schema at " + loc.where() + ": " + keyword + " must be a string");
        const std::string& ref = value.get_ref<const std::string&>();
        std::string absolute = resolve_uri(loc.base, ref);
        UriAndFragment parts = split_fragment(absolute);
        auto unresolvable = [&](const std::string& why) -> SchemaError {
            return SchemaError("cannot resolve " + std::string(keyword) + " '" + ref + "' at " + loc.where() +
                               " (resolved to '" + absolute + "'): " + why);
        };
        const Json* resource = find_resource(parts.uri);
        if (resource == nullptr) {
            throw unresolvable(
                "no schema with that URI; remote documents are never fetched, register it in "
                "Options::documents");
        }
        Target t;
        t.fragment = parts.fragment;
        if (parts.fragment.empty()) {
            t.json = resource;
        } else if (parts.fragment[0] == '/') {
            t.pointer = true;
            std::optional<std::string> decoded = percent_decode(parts.fragment);
            std::optional<std::vector<std::string>> tokens;
            if (decoded) tokens = util::parse_json_pointer(*decoded);
            if (!tokens) throw unresolvable("malformed JSON Pointer");
            const Json* cur = resource;
            for (const std::string& token : *tokens) {
                if (cur->is_object()) {
                    auto it = cur->find(token);
                    if (it == cur->end()) throw unresolvable("no member '" + token + "'");
                    cur = &*it;
                } else if (cur->is_array()) {
                    bool digits = !token.empty() && token.size() < 10 &&
                                  std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                                  (token.size() == 1 || token[0] != '0');
                    std::size_t index = digits ? std::stoul(token) : cur->size();
                    if (index >= cur->size()) throw unresolvable("no element '" + token + "'");
                    cur = &(*cur)[index];
                } else {
                    throw unresolvable("'" + token + "' is below a scalar value");
                }
            }
            t.json = cur;
            if (locations_.count(cur) == 0) {
                // Not reached by indexing (e.g. inside an unknown keyword): it takes the base URI and
                // dialect of the resource the pointer started from.
                const Location& rl = locations_.at(resource);
                index(*cur, rl.base, rl.dialect, rl.resource, rl.doc, *decoded, false, 0);
            }
        } else {
            std::optional<std::string> name = percent_decode(parts.fragment);
            auto it = name ? anchors_.find(parts.uri + "#" + *name) : anchors_.end();
            if (it == anchors_.end()) throw unresolvable("no anchor named '" + parts.fragment + "'");
            t.json = it->second;
        }
        return t;
    }

    const Node* subschema(const Json& parent, const char* keyword, const Location& loc, const std::string& pointer) {
        const Json& child = parent.at(keyword);
        return subschema_value(child, loc, pointer + "/" + keyword);
    }

    const Node* subschema_value(const Json& child, const Location& loc, const std::string& pointer_hint) {
        if (!child.is_object() && !child.is_boolean()) {
            throw SchemaError("invalid schema at " + loc.where() + pointer_hint +
                              ": a schema must be an object or a boolean");
        }
        return node_for(&child);
    }

    std::uint64_t non_negative_integer(const Json& s, const char* keyword, const Location& loc) {
        const Json& v = s.at(keyword);
        if (!v.is_number() || !is_integral(v) || compare_numbers(Number::of(v), Number::of(Json(0))) < 0) {
            throw SchemaError("invalid schema at " + loc.where() + "/" + keyword +
                              ": must be a non-negative integer, got " + v.dump());
        }
        if (v.is_number_float()) {
            double d = v.get<double>();
            return d >= 1.8e19 ? UINT64_MAX : static_cast<std::uint64_t>(d);
        }
        return v.get<std::uint64_t>();
    }

    const Json* number_value(const Json& s, const char* keyword, const Location& loc, std::optional<Number>& out) {
        auto it = s.find(keyword);
        if (it == s.end()) return nullptr;
        if (!it->is_number()) {
            throw SchemaError("invalid schema at " + loc.where() + "/" + keyword + ": must be a number, got " +
                              it->dump());
        }
        out = Number::of(*it);
        return &*it;
    }

    std::vector<Edge> schema_array(const Json& s, const char* keyword, const Location& loc, bool non_empty) {
        const Json& arr = s.at(keyword);
        if (!arr.is_array() || (non_empty && arr.empty())) {
            throw SchemaError("invalid schema at " + loc.where() + "/" + keyword + ": must be a" +
                              (non_empty ? " non-empty" : "n") + " array of schemas");
        }
        std::vector<Edge> edges;
        edges.reserve(arr.size());
        for (std::size_t i = 0; i < arr.size(); ++i) {
            std::string path = std::string(keyword) + "/" + std::to_string(i);
            edges.push_back({path, subschema_value(arr[i], loc, "/" + path)});
        }
        return edges;
    }

    std::vector<NamedEdge> schema_map(const Json& s, const char* keyword, const Location& loc) {
        const Json& obj = s.at(keyword);
        if (!obj.is_object()) {
            throw SchemaError("invalid schema at " + loc.where() + "/" + keyword + ": must be an object");
        }
        std::vector<NamedEdge> edges;
        for (auto it = obj.begin(); it != obj.end(); ++it) {
            std::string path = pointer_append(keyword, it.key());
            edges.push_back({it.key(), path, subschema_value(*it, loc, "/" + path)});
        }
        return edges;  // std::map iteration order: sorted by name
    }

    std::vector<std::string> string_array(const Json& v, const std::string& where) {
        if (!v.is_array()) throw SchemaError("invalid schema at " + where + ": must be an array of strings");
        std::vector<std::string> out;
        for (const Json& e : v) {
            if (!e.is_string()) throw SchemaError("invalid schema at " + where + ": must be an array of strings");
            out.push_back(e.get<std::string>());
        }
        return out;
    }

    void build(const Json& s, Node& n) {
        auto loc_it = locations_.find(&s);
        if (loc_it == locations_.end()) {
            // Reached only through node_for() on indexed subschemas; keep a clear error regardless.
            throw SchemaError("internal error: subschema was not indexed");
        }
        const Location& loc = loc_it->second;
        const DialectInfo& d = loc.dialect;
        n.resource = loc.resource;
        if (s.is_boolean()) {
            n.is_bool = true;
            n.bool_value = s.get<bool>();
            return;
        }
        if (!s.is_object()) {
            throw SchemaError("invalid schema at " + loc.where() + ": a schema must be an object or a boolean, got " +
                              s.dump());
        }

        if (d.draft7() && s.contains("$ref")) {
            Target t = resolve_reference(s["$ref"], loc, "$ref");
            n.ref = node_for(t.json);
            n.has_in_place_applicators = true;
            return;
        }

        // Core.
        if (s.contains("$ref")) {
            n.ref = node_for(resolve_reference(s["$ref"], loc, "$ref").json);
        }
        if (!d.draft7() && s.contains("$dynamicRef")) {
            Target t = resolve_reference(s["$dynamicRef"], loc, "$dynamicRef");
            n.dynamic_ref = node_for(t.json);
            // "Bookending": the reference is dynamic only if it names an anchor and its initial
            // target declares that same name as a $dynamicAnchor.
            if (!t.pointer && !t.fragment.empty() && t.json->is_object()) {
                auto da = t.json->find("$dynamicAnchor");
                if (da != t.json->end() && da->is_string() && *da == t.fragment) {
                    n.dynamic_anchor_name = t.fragment;
                    uses_dynamic_scope_ = true;
                }
            }
        }

        // Applicators.
        if (d.has(kVocabApplicator)) {
            if (s.contains("allOf")) n.all_of = schema_array(s, "allOf", loc, true);
            if (s.contains("anyOf")) n.any_of = schema_array(s, "anyOf", loc, true);
            if (s.contains("oneOf")) n.one_of = schema_array(s, "oneOf", loc, true);
            if (s.contains("not")) n.not_schema = subschema(s, "not", loc, "");
            if (s.contains("if")) {
                n.if_schema = subschema(s, "if", loc, "");
                if (s.contains("then")) n.then_schema = subschema(s, "then", loc, "");
                if (s.contains("else")) n.else_schema = subschema(s, "else", loc, "");
            }

            if (s.contains("properties")) n.properties = schema_map(s, "properties", loc);
            if (s.contains("patternProperties")) {
                const Json& pp = s["patternProperties"];
                if (!pp.is_object())
                    throw SchemaError("invalid schema at " + loc.where() + "/patternProperties: must be an object");
                for (auto it = pp.begin(); it != pp.end(); ++it) {
                    std::string path = pointer_append("patternProperties", it.key());
                    n.pattern_properties.push_back({compile_regex(it.key(), loc.where() + "/" + path), path,
                                                    subschema_value(*it, loc, "/" + path)});
                }
            }
            if (s.contains("additionalProperties"))
                n.additional_properties = subschema(s, "additionalProperties", loc, "");
            if (s.contains("propertyNames")) n.property_names = subschema(s, "propertyNames", loc, "");

            if (d.draft7()) {
                if (s.contains("dependencies")) build_dependencies(s, n, loc, "dependencies");
            } else {
                if (s.contains("dependentSchemas")) n.dependent_schemas = schema_map(s, "dependentSchemas", loc);
                // Compatibility: draft-07 "dependencies" in a 2020-12 schema still means what it meant.
                if (s.contains("dependencies") && !s.contains("dependentSchemas") && !s.contains("dependentRequired")) {
                    build_dependencies(s, n, loc, "dependencies");
                }
            }

            auto items = s.find("items");
            if (d.draft7() || (!s.contains("prefixItems") && items != s.end() && items->is_array())) {
                // draft-07 semantics (also accepted in 2020-12 schemas that use the array form).
                if (items != s.end()) {
                    if (items->is_array()) {
                        n.prefix_items = schema_array(s, "items", loc, false);
                        if (s.contains("additionalItems")) {
                            n.items = subschema(s, "additionalItems", loc, "");
                            n.items_path = "additionalItems";
                        }
                    } else {
                        n.items = subschema(s, "items", loc, "");
                        n.items_path = "items";
                    }
                }
            } else {
                if (s.contains("prefixItems")) n.prefix_items = schema_array(s, "prefixItems", loc, true);
                if (items != s.end()) {
                    n.items = subschema(s, "items", loc, "");
                    n.items_path = "items";
                }
            }
            if (s.contains("contains")) n.contains = subschema(s, "contains", loc, "");
        }

        if (!d.draft7() && d.has(kVocabUnevaluated)) {
            if (s.contains("unevaluatedItems")) n.unevaluated_items = subschema(s, "unevaluatedItems", loc, "");
            if (s.contains("unevaluatedProperties")) {
                n.unevaluated_properties = subschema(s, "unevaluatedProperties", loc, "");
            }
        }

        // Validation.
        if (d.has(kVocabValidation)) {
            if (auto it = s.find("type"); it != s.end()) {
                n.types = parse_types(*it, loc);
                n.type_value = &*it;
            }
            if (auto it = s.find("enum"); it != s.end()) {
                if (!it->is_array()) throw SchemaError("invalid schema at " + loc.where() + "/enum: must be an array");
                n.enum_values = &*it;
            }
            if (auto it = s.find("const"); it != s.end()) n.const_value = &*it;

            n.multiple_of_value = number_value(s, "multipleOf", loc, n.multiple_of);
            if (n.multiple_of && compare_numbers(*n.multiple_of, Number::of(Json(0))) <= 0) {
                throw SchemaError("invalid schema at " + loc.where() + "/multipleOf: must be greater than 0");
            }
            n.maximum_value = number_value(s, "maximum", loc, n.maximum);
            n.exclusive_maximum_value = number_value(s, "exclusiveMaximum", loc, n.exclusive_maximum);
            n.minimum_value = number_value(s, "minimum", loc, n.minimum);
            n.exclusive_minimum_value = number_value(s, "exclusiveMinimum", loc, n.exclusive_minimum);

            if (s.contains("maxLength")) n.max_length = non_negative_integer(s, "maxLength", loc);
            if (s.contains("minLength")) n.min_length = non_negative_integer(s, "minLength", loc);
            if (auto it = s.find("pattern"); it != s.end()) {
                if (!it->is_string())
                    throw SchemaError("invalid schema at " + loc.where() + "/pattern: must be a string");
                n.pattern.emplace(compile_regex(it->get<std::string>(), loc.where() + "/pattern"));
            }

            if (s.contains("maxItems")) n.max_items = non_negative_integer(s, "maxItems", loc);
            if (s.contains("minItems")) n.min_items = non_negative_integer(s, "minItems", loc);
            if (auto it = s.find("uniqueItems"); it != s.end()) {
                if (!it->is_boolean())
                    throw SchemaError("invalid schema at " + loc.where() + "/uniqueItems: must be a boolean");
                n.unique_items = it->get<bool>();
            }
            if (!d.draft7()) {
                if (s.contains("maxContains")) n.max_contains = non_negative_integer(s, "maxContains", loc);
                if (s.contains("minContains")) {
                    n.min_contains = non_negative_integer(s, "minContains", loc);
                    n.has_min_contains = true;
                }
            }

            if (s.contains("maxProperties")) n.max_properties = non_negative_integer(s, "maxProperties", loc);
            if (s.contains("minProperties")) n.min_properties = non_negative_integer(s, "minProperties", loc);
            if (auto it = s.find("required"); it != s.end()) n.required = string_array(*it, loc.where() + "/required");
            if (!d.draft7()) {
                if (auto it = s.find("dependentRequired"); it != s.end()) {
                    if (!it->is_object()) {
                        throw SchemaError("invalid schema at " + loc.where() + "/dependentRequired: must be an object");
                    }
                    for (auto dep = it->begin(); dep != it->end(); ++dep) {
                        std::string path = pointer_append("dependentRequired", dep.key());
                        n.dependent_required.push_back({dep.key(), path, string_array(*dep, loc.where() + "/" + path)});
                    }
                }
            }
        }

        // Format: an annotation unless asserting was asked for (by Options or the vocabulary).
        if (auto it = s.find("format"); it != s.end() && it->is_string()) {
            bool assert_format = d.draft7()
                                     ? options_.assert_format
                                     : ((d.vocabularies & kVocabFormatAssertion) != 0 ||
                                        (options_.assert_format && (d.vocabularies & kVocabFormatAnnotation) != 0));
            if (assert_format) {
                n.format = parse_format(it->get_ref<const std::string&>());
                n.format_name = it->get<std::string>();
            }
        }

        n.has_number_keywords = n.multiple_of || n.maximum || n.exclusive_maximum || n.minimum || n.exclusive_minimum;
        n.has_string_keywords = n.max_length || n.min_length || n.pattern || n.format != Format::none;
        n.has_array_keywords = !n.prefix_items.empty() || n.items || n.max_items || n.min_items || n.unique_items ||
                               n.contains || n.unevaluated_items;
        n.has_object_keywords = !n.properties.empty() || !n.pattern_properties.empty() || n.additional_properties ||
                                n.property_names || !n.required.empty() || n.max_properties || n.min_properties ||
                                !n.dependent_required.empty() || !n.dependent_schemas.empty() ||
                                n.unevaluated_properties;
        n.has_in_place_applicators = n.ref || n.dynamic_ref || !n.all_of.empty() || !n.any_of.empty() ||
                                     !n.one_of.empty() || n.not_schema || n.if_schema;
    }

    void build_dependencies(const Json& s, Node& n, const Location& loc, const char* keyword) {
        const Json& deps = s.at(keyword);
        if (!deps.is_object())
            throw SchemaError("invalid schema at " + loc.where() + "/" + keyword + ": must be an object");
        n.dependent_required_keyword = keyword;
        for (auto it = deps.begin(); it != deps.end(); ++it) {
            std::string path = pointer_append(keyword, it.key());
            if (it->is_array()) {
                n.dependent_required.push_back({it.key(), path, string_array(*it, loc.where() + "/" + path)});
            } else {
                n.dependent_schemas.push_back({it.key(), path, subschema_value(*it, loc, "/" + path)});
            }
        }
    }

    std::uint8_t parse_types(const Json& v, const Location& loc) {
        auto one = [&](const Json& t) -> std::uint8_t {
            if (t.is_string()) {
                const std::string& name = t.get_ref<const std::string&>();
                if (name == "null") return kTypeNull;
                if (name == "boolean") return kTypeBoolean;
                if (name == "object") return kTypeObject;
                if (name == "array") return kTypeArray;
                if (name == "number") return kTypeNumber;
                if (name == "string") return kTypeString;
                if (name == "integer") return kTypeInteger;
            }
            throw SchemaError("invalid schema at " + loc.where() + "/type: unknown type " + t.dump() +
                              " (expected null, boolean, object, array, number, string or integer)");
        };
        if (v.is_string()) return one(v);
        if (v.is_array() && !v.empty()) {
            std::uint8_t mask = 0;
            for (const Json& t : v) mask |= one(t);
            return mask;
        }
        throw SchemaError("invalid schema at " + loc.where() +
                          "/type: must be a type name or a non-empty array of them");
    }

    Regex compile_regex(const std::string& pattern, const std::string& where) {
        try {
            return Regex(pattern);
        } catch (const std::exception& e) {
            throw SchemaError("invalid schema at " + where + ": invalid or unsupported regular expression '" + pattern +
                              "': " + e.what());
        }
    }

    Options options_;
    Program& program_;
    DialectInfo root_dialect_;
    std::unordered_map<std::string, const Json*> user_documents_;
    std::unordered_map<std::string, std::string> user_documents_by_id_;  // "$id" -> key
    std::unordered_map<std::string, const Json*> resources_by_uri_;
    std::unordered_map<std::string, const Json*> anchors_;
    std::unordered_map<const Json*, Location> locations_;
    std::unordered_map<std::string, DialectInfo> dialects_;
    std::set<std::string> dialects_in_progress_;
    struct DynamicAnchorSource {
        Resource* resource;
        std::string name;
        const Json* json;
    };
    std::vector<DynamicAnchorSource> dynamic_anchor_sources_;
    bool uses_dynamic_scope_ = false;
    std::unordered_map<const Json*, Node*> nodes_;
    std::vector<std::pair<const Json*, Node*>> pending_;
};

}  // namespace
}  // namespace detail

CompiledSchema compile(const Json& schema, Options options) {
    auto program = std::make_shared<detail::Program>();
    detail::Compiler(std::move(options), *program).run(schema);
    return CompiledSchema(std::move(program));
}

Dialect CompiledSchema::dialect() const { return program_ ? program_->dialect : Dialect::draft2020_12; }

}  // namespace toolport::schema
