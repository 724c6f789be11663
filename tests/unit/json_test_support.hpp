// What the JSON reader's tests share: equality of type as well as value, and random
// mutations of a valid document (truncations, flipped bytes, inserted delimiters).
#pragma once

#include <cstring>
#include <random>
#include <string>

#include "util/json.hpp"

namespace toolport::test_support {

// Equal values of equal types all the way down (Json's operator== calls 1u and 1 equal).
inline bool identical(const Json& a, const Json& b) {
    if (a.type() != b.type()) return false;
    if (a.is_object()) {
        if (a.size() != b.size()) return false;
        for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
            if (i.key() != j.key() || !identical(*i, *j)) return false;
        }
        return true;
    }
    if (a.is_array()) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (!identical(a[i], b[i])) return false;
        return true;
    }
    if (a.is_number_float()) {
        // Bit for bit: -0.0 and 0.0 differ.
        const double x = a.get<double>(), y = b.get<double>();
        return std::memcmp(&x, &y, sizeof x) == 0;
    }
    return a == b;
}

// `seed` with one to three random edits: cut there, a byte replaced, a byte inserted, a byte
// removed; the bytes put in are JSON's delimiters, digits, escapes and UTF-8 lead bytes.
inline std::string mutated(const std::string& seed, std::mt19937& rng) {
    static const std::string alphabet = "{}[]\":,.-+eE0123456789 \\u\x80\xC3\xE2\xF0tfnrl";
    std::string text = seed;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
        const std::size_t at = rng() % text.size();
        switch (rng() % 4) {
            case 0: text.resize(at); break;
            case 1: text[at] = alphabet[rng() % alphabet.size()]; break;
            case 2: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
            default: text.erase(at, 1); break;
        }
    }
    return text;
}

}  // namespace toolport::test_support
