// JSON value semantics JSON Schema needs and nlohmann::json does not give exactly:
// numbers compared by mathematical value across int64/uint64/double (1 == 1.0, and no
// precision loss comparing large integers), and deep equality built on that, for enum,
// const and uniqueItems.

#include <cmath>
#include <cstdio>

#include "schema/internal.hpp"

namespace toolport::schema::detail {

Number Number::of(const Json& j) {
    Number n;
    switch (j.type()) {
        case Json::value_t::number_integer:
            n.kind = kInt;
            n.i = j.get<std::int64_t>();
            break;
        case Json::value_t::number_unsigned:
            n.kind = kUInt;
            n.u = j.get<std::uint64_t>();
            break;
        default:
            n.kind = kFloat;
            n.d = j.get<double>();
            break;
    }
    return n;
}

double Number::as_double() const {
    switch (kind) {
        case kInt: return static_cast<double>(i);
        case kUInt: return static_cast<double>(u);
        default: return d;
    }
}

std::string Number::to_string() const {
    switch (kind) {
        case kInt: return std::to_string(i);
        case kUInt: return std::to_string(u);
        default: return Json(d).dump();
    }
}

namespace {

__int128 as_int128(const Number& n) { return n.kind == Number::kInt ? __int128{n.i} : __int128{n.u}; }

// x86-64 long double has a 64-bit mantissa: exact for every int64, uint64 and double.
long double as_long_double(const Number& n) {
    switch (n.kind) {
        case Number::kInt: return static_cast<long double>(n.i);
        case Number::kUInt: return static_cast<long double>(n.u);
        default: return static_cast<long double>(n.d);
    }
}

int type_rank(const Json& j) {
    switch (j.type()) {
        case Json::value_t::null: return 0;
        case Json::value_t::boolean: return 1;
        case Json::value_t::number_integer:
        case Json::value_t::number_unsigned:
        case Json::value_t::number_float: return 2;
        case Json::value_t::string: return 3;
        case Json::value_t::array: return 4;
        case Json::value_t::object: return 5;
        default: return 6;
    }
}

}  // namespace

int compare_numbers(const Number& a, const Number& b) {
    if (a.kind != Number::kFloat && b.kind != Number::kFloat) {
        __int128 x = as_int128(a);
        __int128 y = as_int128(b);
        return x < y ? -1 : x > y ? 1 : 0;
    }
    long double x = as_long_double(a);
    long double y = as_long_double(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

bool is_multiple_of(const Number& value, const Number& divisor) {
    if (value.kind != Number::kFloat && divisor.kind != Number::kFloat) {
        __int128 d = as_int128(divisor);
        return d != 0 && as_int128(value) % d == 0;
    }
    double v = value.as_double();
    double m = divisor.as_double();
    if (m == 0) return false;
    double q = v / m;
    if (!std::isfinite(q)) {
        // The quotient overflows (e.g. 1e308 / 0.5): fmod is exact in binary floating point.
        return std::fmod(v, m) == 0;
    }
    // Decimal fractions are inexact in binary (0.0075 / 0.0001 == 75.00000000000001), so accept
    // a quotient within a few units in the last place of an integer. Each operand carries at
    // most half an ulp of representation error, so the quotient's relative error is < 4e-16.
    double r = std::nearbyint(q);
    return std::fabs(q - r) <= std::fabs(q) * 1e-15;
}

bool nesting_exceeds(const Json& v, std::size_t limit) {
    if (!v.is_structured()) return false;
    if (limit == 0) return true;
    // Iterative: the point is to inspect values too deep to recurse over.
    struct Level {
        const Json* value;
        Json::const_iterator next;
    };
    std::vector<Level> stack;
    stack.push_back({&v, v.cbegin()});
    while (!stack.empty()) {
        Level& top = stack.back();
        if (top.next == top.value->cend()) {
            stack.pop_back();
            continue;
        }
        const Json& child = *top.next;
        ++top.next;
        if (child.is_structured()) {
            if (stack.size() >= limit) return true;
            stack.push_back({&child, child.cbegin()});
        }
    }
    return false;
}

bool is_integral(const Json& j) {
    if (j.is_number_integer()) return true;  // signed and unsigned
    if (!j.is_number_float()) return false;
    double d = j.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
}

bool json_equal(const Json& a, const Json& b) {
    if (a.is_number() && b.is_number()) return compare_numbers(Number::of(a), Number::of(b)) == 0;
    if (a.type() != b.type()) return false;
    switch (a.type()) {
        case Json::value_t::array: {
            if (a.size() != b.size()) return false;
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (!json_equal(a[i], b[i])) return false;
            }
            return true;
        }
        case Json::value_t::object: {
            if (a.size() != b.size()) return false;
            // Both are std::map with the same ordering, so walk them in step.
            auto ia = a.begin();
            auto ib = b.begin();
            for (; ia != a.end(); ++ia, ++ib) {
                if (ia.key() != ib.key() || !json_equal(ia.value(), ib.value())) return false;
            }
            return true;
        }
        default: return a == b;
    }
}

int json_compare(const Json& a, const Json& b) {
    int ra = type_rank(a);
    int rb = type_rank(b);
    if (ra != rb) return ra < rb ? -1 : 1;
    switch (ra) {
        case 0: return 0;
        case 1: return static_cast<int>(a.get<bool>()) - static_cast<int>(b.get<bool>());
        case 2: return compare_numbers(Number::of(a), Number::of(b));
        case 3: {
            int c = a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>());
            return c < 0 ? -1 : c > 0 ? 1 : 0;
        }
        case 4: {
            std::size_t n = std::min(a.size(), b.size());
            for (std::size_t i = 0; i < n; ++i) {
                if (int c = json_compare(a[i], b[i]); c != 0) return c;
            }
            return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
        }
        case 5: {
            if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
            auto ia = a.begin();
            auto ib = b.begin();
            for (; ia != a.end(); ++ia, ++ib) {
                int c = ia.key().compare(ib.key());
                if (c != 0) return c < 0 ? -1 : 1;
                if (int v = json_compare(ia.value(), ib.value()); v != 0) return v;
            }
            return 0;
        }
        default: return a == b ? 0 : (a < b ? -1 : 1);
    }
}

}  // namespace toolport::schema::detail
