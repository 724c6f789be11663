#include "util/redaction/checks.hpp"

#include <array>
#include <cmath>

namespace toolport::util::redaction {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

int prefix_number(std::string_view digits, std::size_t n) {
    int v = 0;
    for (std::size_t i = 0; i < n && i < digits.size(); ++i) v = v * 10 + (digits[i] - '0');
    return v;
}

}  // namespace

bool luhn_valid(std::string_view digits) {
    if (digits.empty()) return false;
    int sum = 0;
    bool twice = false;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (!is_digit(*it)) return false;
        int d = *it - '0';
        if (twice) {
            d *= 2;
            if (d > 9) d -= 9;
        }
        sum += d;
        twice = !twice;
    }
    return sum % 10 == 0;
}

bool card_number_valid(std::string_view digits) {
    const std::size_t n = digits.size();
    if (n < 12 || n > 19) return false;
    const int p1 = prefix_number(digits, 1), p2 = prefix_number(digits, 2), p3 = prefix_number(digits, 3),
              p4 = prefix_number(digits, 4);
    bool brand = false;
    if (p1 == 4) brand = n == 13 || n == 16 || n == 19;                                     // Visa
    else if (p2 >= 51 && p2 <= 55) brand = n == 16;                                         // Mastercard
    else if (p4 >= 2221 && p4 <= 2720) brand = n == 16;                                     // Mastercard 2-series
    else if (p2 == 34 || p2 == 37) brand = n == 15;                                         // Amex
    else if ((p3 >= 300 && p3 <= 305) || p2 == 36 || p2 == 38) brand = n >= 14 && n <= 19;  // Diners
    else if (p4 >= 3528 && p4 <= 3589) brand = n >= 16;                                     // JCB
    else if (p4 == 6011 || p2 == 65 || (p3 >= 644 && p3 <= 649)) brand = n >= 16;           // Discover
    else if (p2 == 62) brand = n >= 16;                                                     // UnionPay
    else if (p2 == 50 || (p2 >= 56 && p2 <= 69)) brand = n >= 12;                           // Maestro
    return brand && luhn_valid(digits);
}

bool ssn_valid(std::string_view area, std::string_view group, std::string_view serial) {
    if (area.size() != 3 || group.size() != 2 || serial.size() != 4) return false;
    for (auto part : {area, group, serial}) {
        for (char c : part) {
            if (!is_digit(c)) return false;
        }
    }
    const int a = prefix_number(area, 3);
    if (a == 0 || a == 666 || a >= 900) return false;
    if (group == "00" || serial == "0000") return false;
    return true;
}

bool iban_valid(std::string_view iban) {
    if (iban.size() < 15 || iban.size() > 34) return false;
    if (!is_upper(iban[0]) || !is_upper(iban[1]) || !is_digit(iban[2]) || !is_digit(iban[3])) return false;
    // The first four characters move to the end; letters count as 10..35; the whole
    // number mod 97 is 1. Computed digit by digit, so no big integer is needed.
    int remainder = 0;
    auto feed = [&remainder](char c) -> bool {
        if (is_digit(c)) {
            remainder = (remainder * 10 + (c - '0')) % 97;
        } else if (is_upper(c)) {
            remainder = (remainder * 100 + (c - 'A' + 10)) % 97;
        } else {
            return false;
        }
        return true;
    };
    for (std::size_t i = 4; i < iban.size(); ++i) {
        if (!feed(iban[i])) return false;
    }
    for (std::size_t i = 0; i < 4; ++i) feed(iban[i]);
    return remainder == 1;
}

double shannon_entropy(std::string_view text) {
    if (text.empty()) return 0;
    std::array<int, 256> counts{};
    for (unsigned char c : text) ++counts[c];
    double h = 0;
    const double n = static_cast<double>(text.size());
    for (int count : counts) {
        if (count == 0) continue;
        const double p = count / n;
        h -= p * std::log2(p);
    }
    return h;
}

}  // namespace toolport::util::redaction
