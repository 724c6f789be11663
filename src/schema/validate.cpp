// Validation: walking compiled Nodes over an instance.
//
// Design points:
//  - Nothing is allocated while a value is valid, except what unevaluatedProperties /
//    unevaluatedItems need (a bit set per instance they apply to) and what std::regex
//    allocates internally. Instance and keyword paths are linked lists of stack frames and
//    become strings only when an error is reported.
//  - One evaluator serves validate() (collects up to max_errors errors) and is_valid() (stops
//    at the first failure, builds no messages). Subschemas whose failure is not an error by
//    itself (anyOf/oneOf branches, not, if, contains, propertyNames) are evaluated "silently",
//    which also makes them stop at their first failure.
//  - unevaluated*: every schema evaluation may be given an Evaluated set for the current
//    instance; keywords mark the properties/items they applied to; applicators on the same
//    instance ($ref, allOf, anyOf, oneOf, if/then/else, dependentSchemas...) pass it down, and
//    branches that can fail without failing the schema get a scratch set that is merged only
//    when the branch is valid (annotations of failed subschemas are dropped, as the spec
//    says).
//  - $dynamicRef: the chain of schema resources entered so far (the dynamic scope) is kept in
//    stack frames; a dynamic reference takes the outermost resource that declares the anchor.
//  - Depth: instance nesting beyond Options::max_depth, and schema evaluation nested beyond
//    8 * max_depth (reference cycles that never consume the instance), fail with "$maxDepth"
//    errors instead of exhausting the stack.

#include <algorithm>
#include <numeric>

#include "schema/internal.hpp"
#include "schema/uri.hpp"
#include "util/json_pointer.hpp"

namespace toolport::schema {
namespace detail {
namespace {

struct PathSegment {
    const PathSegment* parent = nullptr;
    std::string_view text;  // keyword paths: escaped segment(s); instance paths: raw member name
    std::size_t index = 0;
    bool is_index = false;
};

struct Scope {
    const Scope* parent = nullptr;
    const Resource* resource = nullptr;
};

struct Frame {
    const PathSegment* keyword = nullptr;
    const PathSegment* instance = nullptr;
    const Scope* scope = nullptr;
    std::size_t depth = 0;           // schemas entered
    std::size_t instance_depth = 0;  // instance nesting
};

// The properties (by position in the object's iteration order) or items of one instance
// that some schema evaluated. Objects and arrays of up to 128 entries need no allocation.
class Evaluated {
public:
    Evaluated() = default;
    Evaluated(const Evaluated&) = delete;  // data_ may point into the object itself
    Evaluated& operator=(const Evaluated&) = delete;

    void reset(std::size_t n) {
        words_ = (n + 63) / 64;
        if (words_ <= kInline) {
            inline_[0] = inline_[1] = 0;
            data_ = inline_;
        } else {
            heap_.assign(words_, 0);
            data_ = heap_.data();
        }
    }
    void mark(std::size_t i) { data_[i >> 6] |= std::uint64_t{1} << (i & 63); }
    bool test(std::size_t i) const { return (data_[i >> 6] >> (i & 63)) & 1; }
    void merge(const Evaluated& other) {
        for (std::size_t i = 0; i < words_ && i < other.words_; ++i) data_[i] |= other.data_[i];
    }
    void swap(Evaluated& other) {
        Evaluated tmp;
        tmp.take(*this);
        take(other);
        other.take(tmp);
    }

private:
    static constexpr std::size_t kInline = 2;
    void take(Evaluated& from) {
        words_ = from.words_;
        heap_ = std::move(from.heap_);
        inline_[0] = from.inline_[0];
        inline_[1] = from.inline_[1];
        data_ = words_ <= kInline ? inline_ : heap_.data();
    }

    std::uint64_t inline_[kInline] = {0, 0};
    std::uint64_t* data_ = inline_;
    std::size_t words_ = 0;
    std::vector<std::uint64_t> heap_;
};

std::string render(const PathSegment* p, bool escape) {
    const PathSegment* segments[64];
    std::vector<const PathSegment*> more;
    std::size_t n = 0;
    for (; p != nullptr; p = p->parent) {
        if (n < 64) {
            segments[n++] = p;
        } else {
            more.push_back(p);
        }
    }
    std::string out;
    auto emit = [&](const PathSegment* s) {
        out += '/';
        if (s->is_index) {
            out += std::to_string(s->index);
        } else if (escape) {
            util::append_pointer_token(out, s->text);
        } else {
            out += s->text;
        }
    };
    for (auto it = more.rbegin(); it != more.rend(); ++it) emit(*it);
    while (n > 0) emit(segments[--n]);
    return out;
}

const char* type_name(const Json& v) {
    switch (v.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::boolean: return "boolean";
        case Json::value_t::object: return "object";
        case Json::value_t::array: return "array";
        case Json::value_t::string: return "string";
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
        case Json::value_t::number_float: return "number";
        default: return "value";
    }
}

bool type_matches(std::uint8_t mask, const Json& v) {
    switch (v.type()) {
        case Json::value_t::null: return mask & kTypeNull;
        case Json::value_t::boolean: return mask & kTypeBoolean;
        case Json::value_t::object: return mask & kTypeObject;
        case Json::value_t::array: return mask & kTypeArray;
        case Json::value_t::string: return mask & kTypeString;
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned: return mask & (kTypeNumber | kTypeInteger);
        case Json::value_t::number_float: return (mask & kTypeNumber) || ((mask & kTypeInteger) && is_integral(v));
        default: return false;
    }
}

std::string describe_types(const Json& type_value) {
    if (type_value.is_string()) return type_value.get<std::string>();
    std::string out;
    for (std::size_t i = 0; i < type_value.size(); ++i) {
        if (i > 0) out += i + 1 == type_value.size() ? " or " : ", ";
        out += type_value[i].get<std::string>();
    }
    return out;
}

std::string short_dump(const Json& v, std::size_t limit = 80) {
    std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (s.size() > limit) {
        s.resize(limit);
        s += "...";
    }
    return s;
}

// True if `v` has containers nested more than `limit` levels deep (recursion bounded by limit).
bool deeper_than(const Json& v, std::size_t limit) {
    if (!v.is_structured()) return false;
    if (limit == 0) return true;
    for (const Json& child : v) {
        if (deeper_than(child, limit - 1)) return true;
    }
    return false;
}

// Values copied into errors: copying (and later dumping) a pathologically deep value would
// recurse as deep as it is nested.
Json reportable(const Json& v) {
    if (deeper_than(v, 64)) return Json("<value nested too deeply to include>");
    return v;
}

// The types a list of alternatives accepts, when every alternative declares "type"
// (e.g. {"anyOf": [{"type": "string"}, {"type": "null"}]}): ["string", "null"]. Else null.
Json alternative_types(const std::vector<Edge>& alternatives) {
    Json types = Json::array();
    for (const Edge& e : alternatives) {
        if (e.node->is_bool || e.node->type_value == nullptr) return Json();
        const Json& t = *e.node->type_value;
        for (const Json& name : t.is_array() ? t : Json::array({t})) {
            if (std::find(types.begin(), types.end(), name) == types.end()) types.push_back(name);
        }
    }
    return types;
}

const NamedEdge* find_property(const std::vector<NamedEdge>& properties, const std::string& key) {
    auto it = std::lower_bound(properties.begin(), properties.end(), key,
                               [](const NamedEdge& e, const std::string& k) { return e.name < k; });
    return it != properties.end() && it->name == key ? &*it : nullptr;
}

class Evaluator {
public:
    Evaluator(const Program& program, ValidationResult* result)
        : program_(program),
          result_(result),
          errors_(result ? &result->errors : nullptr),
          max_evaluation_depth_(program.max_depth * 8) {}

    bool run(const Json& instance) {
        Frame root;
        return eval(*program_.root, instance, root, nullptr);
    }

private:
    // Stops at the first failure when errors are not wanted, or once enough were collected.
    bool fail_fast() const { return errors_ == nullptr || stopped_; }

    // Makes subschema failures non-errors for the lifetime of the guard.
    class Silence {
    public:
        explicit Silence(Evaluator& e) : e_(e), saved_(e.errors_) { e.errors_ = nullptr; }
        ~Silence() { e_.errors_ = saved_; }
        Silence(const Silence&) = delete;
        Silence& operator=(const Silence&) = delete;

    private:
        Evaluator& e_;
        std::vector<ValidationError>* saved_;
    };

    // Records an error (when collecting); `fill` sets message and expected. Not inlined, like
    // the per-type helpers below, so that the frames of the recursive path (eval ->
    // eval_in_place / eval_array / eval_object -> eval) stay small: the depth limits must hold
    // on thread stacks much smaller than the main thread's.
    template <typename Fill>
    [[gnu::noinline, gnu::cold]] void report(const PathSegment* instance_path, const PathSegment* keyword_path,
                                             const char* keyword, const Json& actual, Fill&& fill) {
        if (errors_ == nullptr) return;
        if (errors_->size() >= program_.max_errors) {
            result_->truncated = true;
            stopped_ = true;
            return;
        }
        ValidationError e;
        e.instance_location = render(instance_path, true);
        e.keyword_location = render(keyword_path, false);
        e.keyword = keyword;
        e.actual = reportable(actual);
        fill(e);
        errors_->push_back(std::move(e));
    }

    // Reports an error for keyword `keyword` of the schema at frame `f`.
    template <typename Fill>
    void report_keyword(const Frame& f, const char* keyword, const Json& actual, Fill&& fill) {
        PathSegment kw{f.keyword, keyword};
        report(f.instance, &kw, keyword, actual, std::forward<Fill>(fill));
    }

    static Frame same_instance(const Frame& f, const PathSegment* kw) {
        return Frame{kw, f.instance, f.scope, f.depth, f.instance_depth};
    }

    // Evaluates `node` against a member/element of the current instance.
    bool descend(const Node& node, const Json& child, const Frame& f, const PathSegment* kw, const PathSegment* inst) {
        if (f.instance_depth + 1 > program_.max_depth) {
            report(inst, kw, "$maxDepth", child, [&](ValidationError& e) {
                e.message = "value is nested deeper than the maximum depth of " + std::to_string(program_.max_depth);
                e.expected = program_.max_depth;
            });
            return false;
        }
        Frame c{kw, inst, f.scope, f.depth, f.instance_depth + 1};
        return eval(node, child, c, nullptr);
    }

    bool eval(const Node& n, const Json& v, const Frame& parent, Evaluated* annotations);
    [[gnu::noinline]] bool eval_number(const Node& n, const Json& v, const Frame& f);
    [[gnu::noinline]] bool eval_string(const Node& n, const Json& v, const Frame& f);
    [[gnu::noinline]] bool eval_array(const Node& n, const Json& v, const Frame& f, Evaluated* a);
    [[gnu::noinline]] bool eval_object(const Node& n, const Json& v, const Frame& f, Evaluated* a);
    [[gnu::noinline]] bool eval_in_place(const Node& n, const Json& v, const Frame& f, Evaluated* a);
    [[gnu::noinline]] bool eval_branches(const Node& n, const Json& v, const Frame& f, Evaluated* a);
    [[gnu::noinline]] bool eval_unevaluated(const Node& n, const Json& v, const Frame& f, Evaluated& seen);
    [[gnu::noinline]] bool eval_enum_const(const Node& n, const Json& v, const Frame& f);

    const Program& program_;
    ValidationResult* result_;
    std::vector<ValidationError>* errors_;
    std::size_t max_evaluation_depth_;
    bool stopped_ = false;
};

bool Evaluator::eval(const Node& n, const Json& v, const Frame& parent, Evaluated* annotations) {
    if (n.is_bool) {
        if (n.bool_value) return true;
        report(parent.instance, parent.keyword, "false", v, [&](ValidationError& e) {
            e.message = "no value is allowed here (the schema is false)";
            e.expected = false;
        });
        return false;
    }
    if (parent.depth >= max_evaluation_depth_) {
        report(parent.instance, parent.keyword, "$maxDepth", v, [&](ValidationError& e) {
            e.message = "schema evaluation nested more than " + std::to_string(max_evaluation_depth_) +
                        " levels deep (a recursive $ref that never descends into the value?)";
            e.expected = max_evaluation_depth_;
        });
        return false;
    }
    Frame f = parent;
    ++f.depth;
    Scope scope;
    if (n.resource != nullptr && (f.scope == nullptr || f.scope->resource != n.resource)) {
        scope = Scope{f.scope, n.resource};
        f.scope = &scope;
    }

    // Annotations for this instance: our own set if we have unevaluated* to apply, else the
    // caller's (if it asked for them).
    Evaluated own;
    Evaluated* a = annotations;
    const bool tracks = (n.unevaluated_properties != nullptr && v.is_object()) ||
                        (n.unevaluated_items != nullptr && v.is_array());
    if (tracks) {
        own.reset(v.size());
        a = &own;
    }

    bool valid = true;
    if (n.types != 0 && !type_matches(n.types, v)) {
        valid = false;
        report_keyword(f, "type", v, [&](ValidationError& e) {
            e.message = "expected " + describe_types(*n.type_value) + ", got " + type_name(v);
            e.expected = *n.type_value;
        });
        if (fail_fast()) return false;
    }
    if ((n.enum_values != nullptr || n.const_value != nullptr) && !eval_enum_const(n, v, f)) {
        valid = false;
        if (fail_fast()) return false;
    }

    bool ok = true;
    switch (v.type()) {
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
        case Json::value_t::number_float:
            if (n.has_number_keywords) ok = eval_number(n, v, f);
            break;
        case Json::value_t::string:
            if (n.has_string_keywords) ok = eval_string(n, v, f);
            break;
        case Json::value_t::array:
            if (n.has_array_keywords) ok = eval_array(n, v, f, a);
            break;
        case Json::value_t::object:
            if (n.has_object_keywords) ok = eval_object(n, v, f, a);
            break;
        default: break;
    }
    if (!ok) {
        valid = false;
        if (fail_fast()) return false;
    }
    if (n.has_in_place_applicators && !eval_in_place(n, v, f, a)) {
        valid = false;
        if (fail_fast()) return false;
    }
    if (tracks) {
        if (!eval_unevaluated(n, v, f, own)) {
            valid = false;
            if (fail_fast()) return false;
        }
        if (annotations != nullptr) annotations->merge(own);
    }
    return valid;
}

bool Evaluator::eval_enum_const(const Node& n, const Json& v, const Frame& f) {
    bool valid = true;
    if (n.enum_values != nullptr) {
        bool found = false;
        for (const Json& option : *n.enum_values) {
            if (json_equal(option, v)) {
                found = true;
                break;
            }
        }
        if (!found) {
            valid = false;
            report_keyword(f, "enum", v, [&](ValidationError& e) {
                std::string list;
                std::size_t shown = 0;
                for (const Json& option : *n.enum_values) {
                    if (shown == 10) {
                        list += ", ...";
                        break;
                    }
                    if (shown++ > 0) list += ", ";
                    list += short_dump(option, 40);
                }
                e.message = "value must be one of: " + list;
                e.expected = *n.enum_values;
            });
            if (fail_fast()) return false;
        }
    }
    if (n.const_value != nullptr && !json_equal(*n.const_value, v)) {
        valid = false;
        report_keyword(f, "const", v, [&](ValidationError& e) {
            e.message = "value must be " + short_dump(*n.const_value);
            e.expected = *n.const_value;
        });
        if (fail_fast()) return false;
    }

    return valid;
}

bool Evaluator::eval_number(const Node& n, const Json& v, const Frame& f) {
    const Number x = Number::of(v);
    bool valid = true;
    auto check = [&](bool failed, const char* keyword, const Json* limit, const char* relation) {
        if (!failed) return true;
        valid = false;
        report_keyword(f, keyword, v, [&](ValidationError& e) {
            e.message = "value " + x.to_string() + " " + relation + " " + limit->dump();
            e.expected = *limit;
        });
        return !fail_fast();
    };
    if (n.multiple_of &&
        !check(!is_multiple_of(x, *n.multiple_of), "multipleOf", n.multiple_of_value, "is not a multiple of")) {
        return false;
    }
    if (n.maximum &&
        !check(compare_numbers(x, *n.maximum) > 0, "maximum", n.maximum_value, "is greater than the maximum of")) {
        return false;
    }
    if (n.exclusive_maximum && !check(compare_numbers(x, *n.exclusive_maximum) >= 0, "exclusiveMaximum",
                                      n.exclusive_maximum_value, "must be less than")) {
        return false;
    }
    if (n.minimum &&
        !check(compare_numbers(x, *n.minimum) < 0, "minimum", n.minimum_value, "is less than the minimum of")) {
        return false;
    }
    if (n.exclusive_minimum && !check(compare_numbers(x, *n.exclusive_minimum) <= 0, "exclusiveMinimum",
                                      n.exclusive_minimum_value, "must be greater than")) {
        return false;
    }
    return valid;
}

bool Evaluator::eval_string(const Node& n, const Json& v, const Frame& f) {
    const std::string& s = v.get_ref<const std::string&>();
    bool valid = true;
    if (n.min_length || n.max_length) {
        const std::size_t length = count_code_points(s);  // code points, not bytes
        if (n.min_length && length < *n.min_length) {
            valid = false;
            report_keyword(f, "minLength", v, [&](ValidationError& e) {
                e.message = "string must be at least " + std::to_string(*n.min_length) + " characters long (got " +
                            std::to_string(length) + ")";
                e.expected = *n.min_length;
            });
            if (fail_fast()) return false;
        }
        if (n.max_length && length > *n.max_length) {
            valid = false;
            report_keyword(f, "maxLength", v, [&](ValidationError& e) {
                e.message = "string must be at most " + std::to_string(*n.max_length) + " characters long (got " +
                            std::to_string(length) + ")";
                e.expected = *n.max_length;
            });
            if (fail_fast()) return false;
        }
    }
    if (n.pattern) {
        Regex::Match m = n.pattern->search(s);
        if (m != Regex::Match::yes) {
            valid = false;
            report_keyword(f, "pattern", v, [&](ValidationError& e) {
                e.message = m == Regex::Match::too_long
                                ? "string is too long to be checked against pattern '" + n.pattern->source() +
                                      "' (patterns with back-references are limited to " +
                                      std::to_string(Regex::kMaxBacktrackingInput) + " characters)"
                                : "string does not match pattern '" + n.pattern->source() + "'";
                e.expected = n.pattern->source();
            });
            if (fail_fast()) return false;
        }
    }
    if (n.format != Format::none && !check_format(n.format, s)) {
        valid = false;
        report_keyword(f, "format", v, [&](ValidationError& e) {
            e.message = "string is not a valid " + n.format_name;
            e.expected = n.format_name;
        });
        if (fail_fast()) return false;
    }
    return valid;
}

bool Evaluator::eval_array(const Node& n, const Json& v, const Frame& f, Evaluated* a) {
    const std::size_t size = v.size();
    bool valid = true;
    if (n.min_items && size < *n.min_items) {
        valid = false;
        report_keyword(f, "minItems", v, [&](ValidationError& e) {
            e.message = "array must have at least " + std::to_string(*n.min_items) + " items (got " +
                        std::to_string(size) + ")";
            e.expected = *n.min_items;
        });
        if (fail_fast()) return false;
    }
    if (n.max_items && size > *n.max_items) {
        valid = false;
        report_keyword(f, "maxItems", v, [&](ValidationError& e) {
            e.message = "array must have at most " + std::to_string(*n.max_items) + " items (got " +
                        std::to_string(size) + ")";
            e.expected = *n.max_items;
        });
        if (fail_fast()) return false;
    }
    if (n.unique_items && size > 1) {
        // Comparing items recurses into them: refuse items nested beyond the depth limit.
        std::size_t room = program_.max_depth > f.instance_depth ? program_.max_depth - f.instance_depth : 0;
        bool too_deep = deeper_than(v, room);
        std::size_t first = 0;
        std::size_t second = 0;
        bool duplicate = false;
        if (!too_deep && size <= 16) {
            for (std::size_t i = 0; i < size && !duplicate; ++i) {
                for (std::size_t j = i + 1; j < size; ++j) {
                    if (json_equal(v[i], v[j])) {
                        first = i;
                        second = j;
                        duplicate = true;
                        break;
                    }
                }
            }
        } else if (!too_deep) {
            std::vector<std::size_t> order(size);
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::stable_sort(order.begin(), order.end(),
                             [&](std::size_t x, std::size_t y) { return json_compare(v[x], v[y]) < 0; });
            for (std::size_t k = 1; k < size; ++k) {
                if (json_compare(v[order[k - 1]], v[order[k]]) == 0) {
                    first = std::min(order[k - 1], order[k]);
                    second = std::max(order[k - 1], order[k]);
                    duplicate = true;
                    break;
                }
            }
        }
        if (too_deep) {
            valid = false;
            report_keyword(f, "$maxDepth", v, [&](ValidationError& e) {
                e.message = "array items are nested too deeply to compare for uniqueItems (maximum depth " +
                            std::to_string(program_.max_depth) + ")";
                e.expected = program_.max_depth;
            });
            if (fail_fast()) return false;
        } else if (duplicate) {
            valid = false;
            report_keyword(f, "uniqueItems", v, [&](ValidationError& e) {
                e.message = "array items at index " + std::to_string(first) + " and " + std::to_string(second) +
                            " are equal, but items must be unique";
                e.expected = true;
            });
            if (fail_fast()) return false;
        }
    }

    const std::size_t prefix = std::min(n.prefix_items.size(), size);
    for (std::size_t i = 0; i < prefix; ++i) {
        PathSegment kw{f.keyword, n.prefix_items[i].path};
        PathSegment inst{f.instance, {}, i, true};
        if (a != nullptr) a->mark(i);
        if (!descend(*n.prefix_items[i].node, v[i], f, &kw, &inst)) {
            valid = false;
            if (fail_fast()) return false;
        }
    }
    if (n.items != nullptr && size > prefix) {
        PathSegment kw{f.keyword, n.items_path};
        if (n.items->is_bool && !n.items->bool_value) {
            valid = false;
            report(f.instance, &kw, n.items_path == "items" ? "items" : "additionalItems", v, [&](ValidationError& e) {
                e.message = prefix == 0 ? "array must be empty"
                                        : "array must have at most " + std::to_string(n.prefix_items.size()) +
                                              " items (got " + std::to_string(size) + ")";
                e.expected = n.prefix_items.size();
            });
            if (fail_fast()) return false;
        } else {
            for (std::size_t i = prefix; i < size; ++i) {
                PathSegment inst{f.instance, {}, i, true};
                if (a != nullptr) a->mark(i);
                if (!descend(*n.items, v[i], f, &kw, &inst)) {
                    valid = false;
                    if (fail_fast()) return false;
                }
            }
        }
    }

    if (n.contains != nullptr) {
        std::size_t matches = 0;
        {
            Silence quiet(*this);
            PathSegment kw{f.keyword, "contains"};
            for (std::size_t i = 0; i < size; ++i) {
                PathSegment inst{f.instance, {}, i, true};
                if (descend(*n.contains, v[i], f, &kw, &inst)) {
                    ++matches;
                    if (a != nullptr) {
                        a->mark(i);
                    } else if (!n.max_contains && matches >= n.min_contains) {
                        break;  // nothing more to learn
                    }
                }
            }
        }
        if (matches < n.min_contains) {
            valid = false;
            const char* keyword = n.has_min_contains ? "minContains" : "contains";
            report_keyword(f, keyword, v, [&](ValidationError& e) {
                e.message = n.has_min_contains
                                ? "array must contain at least " + std::to_string(n.min_contains) +
                                      " items matching the contains schema (got " + std::to_string(matches) + ")"
                                : "array does not contain any item matching the contains schema";
                e.expected = n.min_contains;
            });
            if (fail_fast()) return false;
        }
        if (n.max_contains && matches > *n.max_contains) {
            valid = false;
            report_keyword(f, "maxContains", v, [&](ValidationError& e) {
                e.message = "array must contain at most " + std::to_string(*n.max_contains) +
                            " items matching the contains schema (got " + std::to_string(matches) + ")";
                e.expected = *n.max_contains;
            });
            if (fail_fast()) return false;
        }
    }
    return valid;
}

bool Evaluator::eval_object(const Node& n, const Json& v, const Frame& f, Evaluated* a) {
    const std::size_t size = v.size();
    bool valid = true;
    if (n.min_properties && size < *n.min_properties) {
        valid = false;
        report_keyword(f, "minProperties", v, [&](ValidationError& e) {
            e.message = "object must have at least " + std::to_string(*n.min_properties) + " properties (got " +
                        std::to_string(size) + ")";
            e.expected = *n.min_properties;
        });
        if (fail_fast()) return false;
    }
    if (n.max_properties && size > *n.max_properties) {
        valid = false;
        report_keyword(f, "maxProperties", v, [&](ValidationError& e) {
            e.message = "object must have at most " + std::to_string(*n.max_properties) + " properties (got " +
                        std::to_string(size) + ")";
            e.expected = *n.max_properties;
        });
        if (fail_fast()) return false;
    }
    for (const std::string& name : n.required) {
        if (!v.contains(name)) {
            valid = false;
            report_keyword(f, "required", v, [&](ValidationError& e) {
                e.message = "missing required property '" + name + "'";
                e.expected = name;
            });
            if (fail_fast()) return false;
        }
    }
    for (const Dependency& dep : n.dependent_required) {
        if (!v.contains(dep.name)) continue;
        for (const std::string& name : dep.required) {
            if (v.contains(name)) continue;
            valid = false;
            PathSegment kw{f.keyword, dep.path};
            report(f.instance, &kw, n.dependent_required_keyword, v, [&](ValidationError& e) {
                e.message = "property '" + dep.name + "' requires property '" + name + "'";
                e.expected = name;
            });
            if (fail_fast()) return false;
        }
    }

    if (!n.properties.empty() || !n.pattern_properties.empty() || n.additional_properties != nullptr) {
        std::size_t i = 0;
        for (auto it = v.begin(); it != v.end(); ++it, ++i) {
            const std::string& key = it.key();
            PathSegment inst{f.instance, key};
            bool matched = false;
            if (const NamedEdge* e = find_property(n.properties, key)) {
                matched = true;
                PathSegment kw{f.keyword, e->path};
                if (!descend(*e->node, *it, f, &kw, &inst)) {
                    valid = false;
                    if (fail_fast()) return false;
                }
            }
            for (const PatternEdge& p : n.pattern_properties) {
                Regex::Match m = p.regex.search(key);
                PathSegment kw{f.keyword, p.path};
                if (m == Regex::Match::too_long) {
                    valid = false;
                    report(&inst, &kw, "patternProperties", *it, [&](ValidationError& e) {
                        e.message = "property name is too long to be checked against pattern '" + p.regex.source() + "'";
                        e.expected = p.regex.source();
                    });
                    if (fail_fast()) return false;
                    continue;
                }
                if (m != Regex::Match::yes) continue;
                matched = true;
                if (!descend(*p.node, *it, f, &kw, &inst)) {
                    valid = false;
                    if (fail_fast()) return false;
                }
            }
            if (!matched && n.additional_properties != nullptr) {
                matched = true;
                PathSegment kw{f.keyword, "additionalProperties"};
                const Node& ap = *n.additional_properties;
                if (ap.is_bool && !ap.bool_value) {
                    valid = false;
                    report(&inst, &kw, "additionalProperties", *it, [&](ValidationError& e) {
                        e.message = "property '" + key + "' is not allowed";
                        Json allowed = Json::array();
                        for (const NamedEdge& p : n.properties) allowed.push_back(p.name);
                        if (!allowed.empty() && allowed.size() <= 20) {
                            e.message += " (allowed: ";
                            for (std::size_t k = 0; k < allowed.size(); ++k) {
                                if (k > 0) e.message += ", ";
                                e.message += allowed[k].get<std::string>();
                            }
                            e.message += ")";
                        }
                        e.expected = std::move(allowed);
                    });
                    if (fail_fast()) return false;
                } else if (!descend(ap, *it, f, &kw, &inst)) {
                    valid = false;
                    if (fail_fast()) return false;
                }
            }
            if (matched && a != nullptr) a->mark(i);
        }
    }

    if (n.property_names != nullptr) {
        // The names are evaluated as string instances. A per-thread scratch value keeps this
        // allocation-free once warm; it cannot be re-entered, because propertyNames only applies
        // to objects and the scratch instance is a string.
        thread_local Json scratch = Json(std::string());
        PathSegment kw{f.keyword, "propertyNames"};
        for (auto it = v.begin(); it != v.end(); ++it) {
            scratch.get_ref<std::string&>() = it.key();
            bool ok;
            {
                Silence quiet(*this);
                ok = eval(*n.property_names, scratch, same_instance(f, &kw), nullptr);
            }
            if (!ok) {
                valid = false;
                report(f.instance, &kw, "propertyNames", Json(it.key()), [&](ValidationError& e) {
                    e.message = "property name '" + it.key() + "' does not match the propertyNames schema";
                });
                if (fail_fast()) return false;
            }
        }
    }

    for (const NamedEdge& dep : n.dependent_schemas) {
        if (!v.contains(dep.name)) continue;
        PathSegment kw{f.keyword, dep.path};
        if (!eval(*dep.node, v, same_instance(f, &kw), a)) {
            valid = false;
            if (fail_fast()) return false;
        }
    }
    return valid;
}

bool Evaluator::eval_in_place(const Node& n, const Json& v, const Frame& f, Evaluated* a) {
    bool valid = true;
    if (n.ref != nullptr) {
        PathSegment kw{f.keyword, "$ref"};
        if (!eval(*n.ref, v, same_instance(f, &kw), a)) {
            valid = false;
            if (fail_fast()) return false;
        }
    }
    if (n.dynamic_ref != nullptr) {
        const Node* target = n.dynamic_ref;
        if (!n.dynamic_anchor_name.empty()) {
            // The outermost resource in the dynamic scope that declares the anchor wins.
            for (const Scope* s = f.scope; s != nullptr; s = s->parent) {
                if (const Node* t = s->resource->dynamic_anchor(n.dynamic_anchor_name)) target = t;
            }
        }
        PathSegment kw{f.keyword, "$dynamicRef"};
        if (!eval(*target, v, same_instance(f, &kw), a)) {
            valid = false;
            if (fail_fast()) return false;
        }
    }
    for (const Edge& e : n.all_of) {
        PathSegment kw{f.keyword, e.path};
        if (!eval(*e.node, v, same_instance(f, &kw), a)) {
            valid = false;
            if (fail_fast()) return false;
        }
    }
    // The branch keywords keep scratch annotation sets; they live in their own frame so that
    // the common path ($ref, allOf) recurses with a small one.
    if ((!n.any_of.empty() || !n.one_of.empty() || n.not_schema != nullptr || n.if_schema != nullptr) &&
        !eval_branches(n, v, f, a)) {
        valid = false;
        if (fail_fast()) return false;
    }
    return valid;
}

bool Evaluator::eval_branches(const Node& n, const Json& v, const Frame& f, Evaluated* a) {
    bool valid = true;
    const std::size_t size = v.is_structured() ? v.size() : 0;
    if (!n.any_of.empty()) {
        bool any = false;
        {
            Silence quiet(*this);
            Evaluated branch;
            for (const Edge& e : n.any_of) {
                PathSegment kw{f.keyword, e.path};
                if (a == nullptr) {
                    if (eval(*e.node, v, same_instance(f, &kw), nullptr)) {
                        any = true;
                        break;
                    }
                    continue;
                }
                // Every valid branch contributes annotations, so all branches are evaluated.
                branch.reset(size);
                if (eval(*e.node, v, same_instance(f, &kw), &branch)) {
                    any = true;
                    a->merge(branch);
                }
            }
        }
        if (!any) {
            valid = false;
            report_keyword(f, "anyOf", v, [&](ValidationError& e) {
                e.message = "value does not match any of the " + std::to_string(n.any_of.size()) + " schemas in anyOf";
                e.expected = alternative_types(n.any_of);
                if (!e.expected.is_null())
                    e.message += " (expected " + describe_types(e.expected) + ", got " + type_name(v) + ")";
            });
            if (fail_fast()) return false;
        }
    }
    if (!n.one_of.empty()) {
        std::size_t matches = 0;
        std::size_t first = 0;
        std::size_t second = 0;
        Evaluated kept;
        {
            Silence quiet(*this);
            Evaluated branch;
            for (std::size_t i = 0; i < n.one_of.size(); ++i) {
                PathSegment kw{f.keyword, n.one_of[i].path};
                if (a != nullptr) branch.reset(size);
                if (!eval(*n.one_of[i].node, v, same_instance(f, &kw), a != nullptr ? &branch : nullptr)) continue;
                if (++matches == 1) {
                    first = i;
                    if (a != nullptr) kept.swap(branch);
                } else {
                    second = i;
                    break;  // already invalid
                }
            }
        }
        if (matches == 1) {
            if (a != nullptr) a->merge(kept);
        } else {
            valid = false;
            report_keyword(f, "oneOf", v, [&](ValidationError& e) {
                e.message = matches == 0
                                ? "value does not match any of the " + std::to_string(n.one_of.size()) +
                                      " schemas in oneOf"
                                : "value matches more than one schema in oneOf (indexes " + std::to_string(first) +
                                      " and " + std::to_string(second) + "), but must match exactly one";
                if (matches == 0) {
                    e.expected = alternative_types(n.one_of);
                    if (!e.expected.is_null()) {
                        e.message += " (expected " + describe_types(e.expected) + ", got " + type_name(v) + ")";
                    }
                }
            });
            if (fail_fast()) return false;
        }
    }
    if (n.not_schema != nullptr) {
        bool matched;
        {
            Silence quiet(*this);
            PathSegment kw{f.keyword, "not"};
            matched = eval(*n.not_schema, v, same_instance(f, &kw), nullptr);
        }
        if (matched) {
            valid = false;
            report_keyword(f, "not", v,
                           [&](ValidationError& e) { e.message = "value must not match the schema in not"; });
            if (fail_fast()) return false;
        }
    }
    if (n.if_schema != nullptr) {
        bool condition;
        {
            Silence quiet(*this);
            PathSegment kw{f.keyword, "if"};
            if (a != nullptr) {
                Evaluated branch;
                branch.reset(size);
                condition = eval(*n.if_schema, v, same_instance(f, &kw), &branch);
                if (condition) a->merge(branch);
            } else {
                condition = eval(*n.if_schema, v, same_instance(f, &kw), nullptr);
            }
        }
        const Node* next = condition ? n.then_schema : n.else_schema;
        if (next != nullptr) {
            PathSegment kw{f.keyword, condition ? "then" : "else"};
            if (!eval(*next, v, same_instance(f, &kw), a)) {
                valid = false;
                if (fail_fast()) return false;
            }
        }
    }
    return valid;
}

bool Evaluator::eval_unevaluated(const Node& n, const Json& v, const Frame& f, Evaluated& seen) {
    bool valid = true;
    if (v.is_array() && n.unevaluated_items != nullptr) {
        PathSegment kw{f.keyword, "unevaluatedItems"};
        const Node& schema = *n.unevaluated_items;
        for (std::size_t i = 0; i < v.size(); ++i) {
            if (seen.test(i)) continue;
            seen.mark(i);
            PathSegment inst{f.instance, {}, i, true};
            if (schema.is_bool && !schema.bool_value) {
                valid = false;
                report(&inst, &kw, "unevaluatedItems", v[i], [&](ValidationError& e) {
                    e.message = "item at index " + std::to_string(i) + " is not allowed (no schema evaluates it)";
                    e.expected = false;
                });
                if (fail_fast()) return false;
            } else if (!descend(schema, v[i], f, &kw, &inst)) {
                valid = false;
                if (fail_fast()) return false;
            }
        }
    }
    if (v.is_object() && n.unevaluated_properties != nullptr) {
        PathSegment kw{f.keyword, "unevaluatedProperties"};
        const Node& schema = *n.unevaluated_properties;
        std::size_t i = 0;
        for (auto it = v.begin(); it != v.end(); ++it, ++i) {
            if (seen.test(i)) continue;
            seen.mark(i);
            PathSegment inst{f.instance, it.key()};
            if (schema.is_bool && !schema.bool_value) {
                valid = false;
                report(&inst, &kw, "unevaluatedProperties", *it, [&](ValidationError& e) {
                    e.message = "property '" + it.key() + "' is not allowed (no schema evaluates it)";
                    e.expected = false;
                });
                if (fail_fast()) return false;
            } else if (!descend(schema, *it, f, &kw, &inst)) {
                valid = false;
                if (fail_fast()) return false;
            }
        }
    }
    return valid;
}

}  // namespace
}  // namespace detail

ValidationResult CompiledSchema::validate(const Json& instance) const {
    ValidationResult result;
    if (!program_) return result;
    detail::Evaluator evaluator(*program_, &result);
    result.valid = evaluator.run(instance);
    return result;
}

bool CompiledSchema::is_valid(const Json& instance) const {
    if (!program_) return true;
    detail::Evaluator evaluator(*program_, nullptr);
    return evaluator.run(instance);
}

}  // namespace toolport::schema
