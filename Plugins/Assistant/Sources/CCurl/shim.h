/* libcurl for Swift. curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot
 * call, so each argument type gets a typed inline wrapper; everything else is curl.h as is. */
#ifndef TERMHOST_CCURL_SHIM_H
#define TERMHOST_CCURL_SHIM_H
#include <curl/curl.h>

typedef size_t (*termhost_curl_data_cb)(char *data, size_t size, size_t count, void *context);

static inline CURLcode termhost_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode termhost_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode termhost_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode termhost_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
/* CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION. */
static inline CURLcode termhost_curl_set_data_callback(CURL *h, CURLoption o, termhost_curl_data_cb cb) { return curl_easy_setopt(h, o, cb); }
static inline CURLcode termhost_curl_response_code(CURL *h, long *code) { return curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, code); }

#endif
