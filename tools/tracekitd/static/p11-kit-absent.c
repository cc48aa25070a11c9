// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The static tracekitd without PKCS#11.
 *
 * libmicrohttpd serves HTTPS through GnuTLS, and Debian's static GnuTLS
 * refers to p11-kit, which Debian ships only as a shared library (it
 * loads PKCS#11 modules with dlopen, which a static binary cannot do in
 * any case). GnuTLS reaches p11-kit only when it is asked for a PKCS#11
 * token (a "pkcs11:" URL for a key, certificate or trust store), which
 * tracekitd never does: its certificate and key are files. So the static
 * build links these instead: every entry point GnuTLS refers to, with the
 * signatures p11-kit's own headers declare, failing the way p11-kit does
 * when it finds no module. No token can be used, and nothing else
 * changes.
 */
#include <stddef.h>
#include <p11-kit/p11-kit.h>
#include <p11-kit/pin.h>
#include <p11-kit/uri.h>

static const char absent[] = "PKCS#11 is not available in the static tracekitd";

const char *p11_kit_message(void) { return absent; }
const char *p11_kit_strerror(CK_RV rv) { (void)rv; return absent; }

/* No module loads: GnuTLS then reports no PKCS#11 provider. */
CK_FUNCTION_LIST **p11_kit_modules_load(const char *reserved, int flags)
{
	(void)reserved; (void)flags;
	return NULL;
}

CK_FUNCTION_LIST *p11_kit_module_load(const char *module_path, int flags)
{
	(void)module_path; (void)flags;
	return NULL;
}

/* The rest take a module, URI or PIN that the calls above never made. */
CK_RV p11_kit_module_finalize(CK_FUNCTION_LIST *module) { (void)module; return CKR_GENERAL_ERROR; }
void p11_kit_module_release(CK_FUNCTION_LIST *module) { (void)module; }
char *p11_kit_module_get_name(CK_FUNCTION_LIST *module) { (void)module; return NULL; }
int p11_kit_module_get_flags(CK_FUNCTION_LIST *module) { (void)module; return 0; }

char *p11_kit_config_option(CK_FUNCTION_LIST *module, const char *option)
{
	(void)module; (void)option;
	return NULL;
}

size_t p11_kit_space_strlen(const unsigned char *string, size_t max_length)
{
	(void)string; (void)max_length;
	return 0;
}

char *p11_kit_space_strdup(const unsigned char *string, size_t max_length)
{
	(void)string; (void)max_length;
	return NULL;
}

/* A URI cannot be made; GnuTLS treats that as an allocation failure. */
P11KitUri *p11_kit_uri_new(void) { return NULL; }
void p11_kit_uri_free(P11KitUri *uri) { (void)uri; }

int p11_kit_uri_parse(const char *string, P11KitUriType uri_type, P11KitUri *uri)
{
	(void)string; (void)uri_type; (void)uri;
	return P11_KIT_URI_UNEXPECTED;
}

int p11_kit_uri_format(P11KitUri *uri, P11KitUriType uri_type, char **string)
{
	(void)uri; (void)uri_type;
	if (string)
		*string = NULL;
	return P11_KIT_URI_UNEXPECTED;
}

CK_INFO_PTR p11_kit_uri_get_module_info(P11KitUri *uri) { (void)uri; return NULL; }
CK_TOKEN_INFO_PTR p11_kit_uri_get_token_info(P11KitUri *uri) { (void)uri; return NULL; }
const char *p11_kit_uri_get_pin_value(const P11KitUri *uri) { (void)uri; return NULL; }
const char *p11_kit_uri_get_pin_source(const P11KitUri *uri) { (void)uri; return NULL; }

int p11_kit_uri_match_module_info(const P11KitUri *uri, const CK_INFO *info)
{
	(void)uri; (void)info;
	return 0;
}

int p11_kit_uri_match_token_info(const P11KitUri *uri, const CK_TOKEN_INFO *token_info)
{
	(void)uri; (void)token_info;
	return 0;
}

CK_ATTRIBUTE_PTR p11_kit_uri_get_attribute(P11KitUri *uri, CK_ATTRIBUTE_TYPE attr_type)
{
	(void)uri; (void)attr_type;
	return NULL;
}

CK_ATTRIBUTE_PTR p11_kit_uri_get_attributes(P11KitUri *uri, CK_ULONG *n_attrs)
{
	(void)uri;
	if (n_attrs)
		*n_attrs = 0;
	return NULL;
}

int p11_kit_uri_set_attribute(P11KitUri *uri, CK_ATTRIBUTE_PTR attr)
{
	(void)uri; (void)attr;
	return P11_KIT_URI_UNEXPECTED;
}

/* No PIN is ever asked for: there is no token to unlock. */
P11KitPin *p11_kit_pin_new_for_string(const char *value) { (void)value; return NULL; }
void p11_kit_pin_unref(P11KitPin *pin) { (void)pin; }
size_t p11_kit_pin_get_length(P11KitPin *pin) { (void)pin; return 0; }

const unsigned char *p11_kit_pin_get_value(P11KitPin *pin, size_t *length)
{
	(void)pin;
	if (length)
		*length = 0;
	return NULL;
}

int p11_kit_pin_register_callback(const char *pin_source, p11_kit_pin_callback callback,
				  void *callback_data, p11_kit_pin_destroy_func callback_destroy)
{
	(void)pin_source; (void)callback; (void)callback_data; (void)callback_destroy;
	return 0;
}

void p11_kit_pin_unregister_callback(const char *pin_source, p11_kit_pin_callback callback,
				     void *callback_data)
{
	(void)pin_source; (void)callback; (void)callback_data;
}

P11KitPin *p11_kit_pin_request(const char *pin_source, P11KitUri *pin_uri,
			       const char *pin_description, P11KitPinFlags pin_flags)
{
	(void)pin_source; (void)pin_uri; (void)pin_description; (void)pin_flags;
	return NULL;
}

P11KitPin *p11_kit_pin_file_callback(const char *pin_source, P11KitUri *pin_uri,
				     const char *pin_description, P11KitPinFlags pin_flags,
				     void *callback_data)
{
	(void)pin_source; (void)pin_uri; (void)pin_description; (void)pin_flags;
	(void)callback_data;
	return NULL;
}
