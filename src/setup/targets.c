/*
 * Every target of `p11glue setup` and `p11glue status`, in the order a
 * set-up of all of them runs: the registry first, since the proxy that
 * NSS loads reads it, and the trust module there decides what trust's
 * files hold. A new target is a file under targets/ and an entry here.
 */
#include "config.h"

#include "targets.h"
#include "trust-dirs.h"

static const pg_setup_target modules = {
	.name = "modules",
	.summary = "the module registry lists the key store and the trust module",
	.description =
		"  --modules  the module registry (p11-kit's format): in ~/.config/pkcs11/modules\n"
		"             (with --system " P11GLUE_SYSTEM_MODULES_DIR ", with P11GLUE_CONFIG\n"
		"             set $P11GLUE_CONFIG/modules), p11glue-service.module registers\n"
		"             p11glue-client.so, through which programs reach the key store\n"
		"             in your session service, and p11glue-store.module with an\n"
		"             empty 'module:' keeps them from loading the store themselves\n"
		"             (with --direct it registers the store instead);\n"
		"             p11glue-trust.module (trust-policy: yes) registers the trust\n"
		"             module, and p11-kit-trust.module with an empty 'module:'\n"
		"             disables p11-kit's, which would read the same anchors. A\n"
		"             module: or trust-policy: line of your own in these files that\n"
		"             says otherwise is reported and left alone; nothing is changed\n"
		"             then.\n",
	.system = true,
	.plan = pg_setup_modules_plan,
	.status = pg_setup_modules_status,
};

static const pg_setup_target service = {
	.name = "service",
	.summary = "systemd starts the session service on demand (p11glue.socket)",
	.description =
		"  --service  the session service ('p11glue service'), through which programs\n"
		"             reach the key store, one unlock for all of them: systemctl\n"
		"             --user enable p11glue.socket (--system: --global), and\n"
		"             start it when a systemd user manager runs. Without systemd,\n"
		"             p11glue-client.so starts the service itself on first use.\n",
	.system = true,
	.unavailable = pg_setup_service_unavailable,
	.plan = pg_setup_service_plan,
	.apply = pg_setup_service_apply,
	.status = pg_setup_service_status,
};

static const pg_setup_target trust = {
	.name = "trust",
	.summary = "programs that read certificate files follow 'p11glue trust'",
	.description =
		"  --trust    the trust decisions of 'p11glue trust' for programs that read\n"
		"             certificate files: SSL_CERT_FILE, SSL_CERT_DIR, CURL_CA_BUNDLE,\n"
		"             REQUESTS_CA_BUNDLE, NODE_EXTRA_CA_CERTS and JAVA_TOOL_OPTIONS\n"
		"             (javax.net.ssl.trustStore) in ~/.config/environment.d/\n"
		"             60-p11glue-trust.conf and ~/.profile, cacert and capath in\n"
		"             ~/.curlrc, all naming files in ~/.local/share/p11glue/extracted\n"
		"             that every trust command keeps up to date; GnuTLS's default\n"
		"             file cannot be changed per user. With --system: a hook in\n"
		"             " PG_CA_HOOKS_DIR " keeps p11glue's anchors and\n"
		"             distrust in what update-ca-certificates builds (/etc/ssl/certs,\n"
		"             its bundle, Java's cacerts).\n",
	.system = true,
	.plan = pg_setup_trust_plan,
	.apply = pg_setup_trust_apply,
	.status = pg_setup_trust_status,
};

static const pg_setup_target ssh = {
	.name = "ssh",
	.summary = "OpenSSH's client offers the token keys (PKCS11Provider)",
	.description =
		"  --ssh      OpenSSH's client: ~/.ssh/config (with --system\n"
		"             " PG_SETUP_SSH_SYSTEM_FILE ", which Debian's ssh_config\n"
		"             includes) ends with 'Host *' and 'PKCS11Provider' naming the\n"
		"             key store's module (--proxy: the proxy). At the end it applies to\n"
		"             every host but never overrides settings of yours (the first\n"
		"             value wins). A PKCS11Provider of your own for every host\n"
		"             naming another module is reported and left alone; nothing is\n"
		"             changed then.\n",
	.system = true,
	.plan = pg_setup_ssh_plan,
	.status = pg_setup_ssh_status,
};

static const pg_setup_target openssl = {
	.name = "openssl",
	.summary = "an OpenSSL configuration that loads the PKCS#11 engine with the store",
	.description =
		"  --openssl  OpenSSL's PKCS#11 engine (Debian package libengine-pkcs11-openssl):\n"
		"             ~/.config/p11glue/openssl-pkcs11.cnf (with --system\n"
		"             " PG_SETUP_OPENSSL_SYSTEM_FILE "), a file p11glue owns, loads the engine\n"
		"             with the store module (--proxy: the proxy). Use it with\n"
		"             OPENSSL_CONF=FILE and '-engine pkcs11 -keyform engine', or\n"
		"             '.include FILE' at the top of a configuration of yours.\n",
	.system = true,
	.plan = pg_setup_openssl_plan,
	.status = pg_setup_openssl_status,
};

static const pg_setup_target nss = {
	.name = "nss",
	.summary = "NSS (Chromium, Firefox) sees the proxy module's tokens",
	.description =
		"  --nss      NSS (Chromium, Firefox): the proxy module (--module: another of\n"
		"             p11glue's) is added as '" PG_SETUP_NSS_NAME "' with modutil to ~/.pki/nssdb\n"
		"             (made when missing, empty password) and to each Firefox\n"
		"             profile in ~/.mozilla/firefox; --undo deletes it again. Close\n"
		"             Firefox first. A module of yours named '" PG_SETUP_NSS_NAME "' is reported\n"
		"             and left alone. There is no --system form.\n",
	.system = false,
	.unavailable = pg_setup_nss_unavailable,
	.plan = pg_setup_nss_plan,
	.apply = pg_setup_nss_apply,
	.status = pg_setup_nss_status,
};

static const pg_setup_target gnupg = {
	.name = "gnupg",
	.summary = "GnuPG (gpg-agent with gnupg-pkcs11-scd) signs and decrypts with token keys",
	.description =
		"  --gnupg    GnuPG, through gnupg-pkcs11-scd (Debian package gnupg-pkcs11-scd):\n"
		"             in $GNUPGHOME (else ~/.gnupg), gpg-agent.conf gets\n"
		"             'scdaemon-program " PG_SETUP_SCD_PROGRAM "' and gnupg-pkcs11-scd.conf\n"
		"             a provider '" PG_SETUP_SCD_PROVIDER "' naming the store module (with --proxy\n"
		"             the proxy module, with --module PATH that file). A line of\n"
		"             your own that sets scdaemon-program or providers otherwise is\n"
		"             reported and left alone; nothing is changed then. Restart\n"
		"             gpg-agent afterwards: gpgconf --kill gpg-agent.\n",
	.system = false,
	.unavailable = pg_setup_gnupg_unavailable,
	.plan = pg_setup_gnupg_plan,
	.status = pg_setup_gnupg_status,
};

const pg_setup_target *const pg_setup_targets[PG_SETUP_N_TARGETS] = {
	&modules,
	&service,
	&trust,
	&ssh,
	&openssl,
	&nss,
	&gnupg,
};
