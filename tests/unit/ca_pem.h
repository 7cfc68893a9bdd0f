/* ca_pem.h — a self-signed CA certificate (EC P-256, valid until 2126) for
 * the tests that need a real one, written as a JSON string's content ("\n"
 * line ends) to paste into a scenario's tls.ca_pem. */
#ifndef TEST_CA_PEM_H
#define TEST_CA_PEM_H

#define TEST_CA_PEM_JSON \
    "-----BEGIN CERTIFICATE-----\\n" \
    "MIIBnDCCAUOgAwIBAgIUEAK3t6ODu61tXH6mUoeky0rClvUwCgYIKoZIzj0EAwIw\\n" \
    "IzEhMB8GA1UEAwwYbG9hZGNsdXN0ZXIgdW5pdCB0ZXN0IENBMCAXDTI2MTIwMTA4\\n" \
    "MTcwMVoYDzIxMjYxMTA3MDgxNzAxWjAjMSEwHwYDVQQDDBhsb2FkY2x1c3RlciB1\\n" \
    "bml0IHRlc3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQ5+U06LHkomyCS\\n" \
    "4mJmWzBwOwdiZm/ezKSHJ4ZH7DZg5wte8L8AHCAjOEz+oOT0NbVsUOTO/d/GgFaE\\n" \
    "GtbNyyAto1MwUTAdBgNVHQ4EFgQUTw3Bkg97U/n1nQR2CD9/6/HYG48wHwYDVR0j\\n" \
    "BBgwFoAUTw3Bkg97U/n1nQR2CD9/6/HYG48wDwYDVR0TAQH/BAUwAwEB/zAKBggq\\n" \
    "hkjOPQQDAgNHADBEAiBkDULuyyjC32hxN0Fox0CtD4A30/IdbG+G2mTLR70LIgIg\\n" \
    "ar9fiqc8kQXdfWOO1aaoixLyuqAHvLaJ4j8XfgeFUH4=\\n" \
    "-----END CERTIFICATE-----\\n"

#endif
