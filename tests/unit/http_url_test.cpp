// The URL parsing of the HTTP client transport.
#include <gtest/gtest.h>

#include "client/http_url.hpp"

using toolport::client::parse_http_url;

namespace {

std::string error_of(std::string_view url) {
    try {
        parse_http_url(url);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

TEST(HttpUrl, HostPortAndPath) {
    auto url = parse_http_url("http://127.0.0.1:8080/mcp");
    EXPECT_EQ(url.host, "127.0.0.1");
    EXPECT_EQ(url.port, 8080);
    EXPECT_EQ(url.path_and_query, "/mcp");
    EXPECT_EQ(url.host_header(), "127.0.0.1:8080");
    EXPECT_EQ(url.display(), "http://127.0.0.1:8080/mcp");
}

TEST(HttpUrl, DefaultsAndQuery) {
    auto url = parse_http_url("HTTP://example.com");
    EXPECT_EQ(url.port, 80);
    EXPECT_EQ(url.path_and_query, "/");
    EXPECT_EQ(url.host_header(), "example.com");
    auto with_query = parse_http_url("http://h:81/mcp?key=secret#frag");
    EXPECT_EQ(with_query.path_and_query, "/mcp?key=secret");
    EXPECT_EQ(with_query.display(), "http://h:81/mcp") << "queries may hold keys: never displayed";
    EXPECT_EQ(parse_http_url("http://h?x=1").path_and_query, "/?x=1");
}

TEST(HttpUrl, Ipv6Literals) {
    auto url = parse_http_url("http://[::1]:9000/mcp");
    EXPECT_EQ(url.host, "::1");
    EXPECT_TRUE(url.ipv6_literal);
    EXPECT_EQ(url.port, 9000);
    EXPECT_EQ(url.host_header(), "[::1]:9000");
    EXPECT_NE(error_of("http://[::1/mcp").find("closing ']'"), std::string::npos);
}

TEST(HttpUrl, WhatItRefusesAndWhy) {
    EXPECT_NE(error_of("https://example.com/mcp").find("https:// URLs are not supported"), std::string::npos);
    EXPECT_NE(error_of("ftp://x").find("expected an http:// URL"), std::string::npos);
    EXPECT_NE(error_of("example.com:80").find("expected an http:// URL"), std::string::npos);
    EXPECT_NE(error_of("http://user:pw@host/mcp").find("credentials in the URL"), std::string::npos);
    EXPECT_EQ(error_of("http://user:pw@host/mcp").find("pw"), std::string::npos) << "never echo credentials";
    EXPECT_NE(error_of("http:///mcp").find("no host"), std::string::npos);
    EXPECT_NE(error_of("http://h:/mcp").find("no port"), std::string::npos);
    for (const char* bad : {"http://h:0/", "http://h:65536/", "http://h:8x/", "http://h:-1/"}) {
        EXPECT_NE(error_of(bad).find("not a number from 1 to 65535"), std::string::npos) << bad;
    }
    EXPECT_NE(error_of("http://h/a b").find("spaces or control characters"), std::string::npos);
    EXPECT_NE(error_of("http://h/\r\nX: y").find("spaces or control characters"), std::string::npos);
}

}  // namespace
