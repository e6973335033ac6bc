import Foundation

/// One setting of `shelf serve`, declared once: its config-file key, its flag, its environment
/// variable (`SHELF_` + the key in upper case with `_`), what value it takes and how that is
/// checked, its default, whether SIGHUP applies it, and its help. The config reader, the flag
/// parser, `--help`, the man page, `shelf config check`, the restart check, the example
/// `contrib/config.toml` and `docs/config.md` are all made from `ServerConfig.settings`.
public struct ServerSetting: Sendable {
    /// How the flag is written on the command line.
    public enum FlagForm: Sendable, Equatable {
        /// No flag: the file or the environment only.
        case none
        /// `--name VALUE`, VALUE shown as the placeholder.
        case value(String)
        /// `--name VALUE`, repeatable, the values collected.
        case repeated(String)
        /// `--name` alone turns it on (it cannot turn it off: leave it out).
        case presence
    }

    /// What a shell offers for the flag's value.
    public enum Completion: Sendable, Equatable {
        case none, file, directory
        case choices([String])
    }

    /// The config file's key, e.g. `podcast-allow-private`.
    public let key: String
    /// How the flag (`--` + the key) is written, or `.none`.
    public let flagForm: FlagForm
    /// What the value is, in words ("true or false", "an absolute directory path").
    public let takes: String
    /// The default, in words, as the help and the documentation say it.
    public let defaultText: String
    /// Whether SIGHUP applies a change at once (else it needs a restart).
    public let reloads: Bool
    /// One or more sentences on what it does.
    public let help: String
    /// A value for the example config, as TOML.
    public let example: String
    /// Whether the example config sets it (rather than showing it commented out).
    public let exampleActive: Bool
    /// What a shell offers for the flag's value.
    public let completion: Completion
    fileprivate let fromFile: @Sendable (ConfigValue, String, inout ServerConfig) throws(ConfigValueError) -> Void
    fileprivate let fromText: @Sendable (String, String, Origin, inout ServerConfig) throws(ConfigValueError) -> Void
    fileprivate let isSet: @Sendable (ServerConfig) -> Bool
    fileprivate let copy: @Sendable (ServerConfig, inout ServerConfig) -> Void
    fileprivate let same: @Sendable (ServerConfig, ServerConfig) -> Bool

    /// Where a text value came from: a flag is relative to the working directory, a variable is
    /// read as the file is (absolute paths only).
    public enum Origin: Sendable { case flag, environment }

    /// The flag, e.g. `--podcast-allow-private`; nil when there is none.
    public var flag: String? { flagForm == .none ? nil : "--" + key }
    /// The flag's value placeholder; nil for a switch or no flag.
    public var placeholder: String? {
        switch flagForm {
        case .value(let name), .repeated(let name): name
        case .none, .presence: nil
        }
    }
    /// The environment variable, e.g. `SHELF_PODCAST_ALLOW_PRIVATE`.
    public var environmentVariable: String { "SHELF_" + key.uppercased().replacingOccurrences(of: "-", with: "_") }

    /// Sets this setting in `config` from the file's `value`; the error is the reason alone.
    func read(_ value: ConfigValue, into config: inout ServerConfig) throws(ConfigValueError) { try fromFile(value, key, &config) }
    /// Sets this setting in `config` from a flag's or variable's text, `name` naming it in errors.
    public func read(text: String, name: String, origin: Origin, into config: inout ServerConfig) throws(ConfigValueError) {
        try fromText(text, name, origin, &config)
    }
    /// Whether `config` sets it.
    public func isSet(in config: ServerConfig) -> Bool { isSet(config) }
    /// Copies its value from `source` into `target` when `source` sets it.
    func copy(from source: ServerConfig, into target: inout ServerConfig) { if isSet(source) { copy(source, &target) } }
    /// Whether the two configs give it the same value.
    func same(_ a: ServerConfig, _ b: ServerConfig) -> Bool { same(a, b) }

    /// A setting stored at `keyPath`, read from the file by `file` and from text by `text`.
    init<T: Sendable & Equatable>(
        _ key: String, _ keyPath: any WritableKeyPath<ServerConfig, T?> & Sendable, flag: FlagForm = .none, takes: String, default defaultText: String,
        reloads: Bool, help: String, example: String, exampleActive: Bool = false, completion: Completion = .none,
        file: @escaping @Sendable (ConfigValue, String) throws(ConfigValueError) -> T,
        text: @escaping @Sendable (String, String, Origin) throws(ConfigValueError) -> T
    ) {
        self.key = key
        self.flagForm = flag
        self.takes = takes
        self.defaultText = defaultText
        self.reloads = reloads
        self.help = help
        self.example = example
        self.exampleActive = exampleActive
        self.completion = completion
        self.fromFile = { (value, name, config) throws(ConfigValueError) in config[keyPath: keyPath] = try file(value, name) }
        self.fromText = { (value, name, origin, config) throws(ConfigValueError) in config[keyPath: keyPath] = try text(value, name, origin) }
        self.isSet = { $0[keyPath: keyPath] != nil }
        self.copy = { source, target in target[keyPath: keyPath] = source[keyPath: keyPath] }
        self.same = { $0[keyPath: keyPath] == $1[keyPath: keyPath] }
    }
}

extension ServerSetting {
    /// A true-or-false setting (`on`/`off` and the like from a flag or a variable).
    init(
        _ key: String, _ keyPath: any WritableKeyPath<ServerConfig, Bool?> & Sendable, flag: FlagForm = .none, takes: String, default defaultText: String,
        reloads: Bool, help: String, example: String, exampleActive: Bool = false, completion: Completion = .none
    ) {
        self.init(
            key, keyPath, flag: flag, takes: takes, default: defaultText, reloads: reloads, help: help, example: example, exampleActive: exampleActive,
            completion: completion,
            file: { (value, name) throws(ConfigValueError) in try SettingValue.boolean(value, name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.boolean(text, name) })
    }

    /// An absolute path setting: a `directory`, or a file.
    init(
        _ key: String, _ keyPath: any WritableKeyPath<ServerConfig, String?> & Sendable, flag: FlagForm = .none, takes: String, default defaultText: String,
        reloads: Bool, help: String, example: String, exampleActive: Bool = false, completion: Completion = .none, directory: Bool
    ) {
        self.init(
            key, keyPath, flag: flag, takes: takes, default: defaultText, reloads: reloads, help: help, example: example, exampleActive: exampleActive,
            completion: completion,
            file: { (value, name) throws(ConfigValueError) in try SettingValue.path(SettingValue.string(value, name), name, directory: directory, origin: nil)
            },
            text: { (text, name, origin) throws(ConfigValueError) in try SettingValue.path(text, name, directory: directory, origin: origin) })
    }
}

// MARK: - Value kinds

/// The checks shared by settings of one kind, each with the message the file's mistakes have
/// always had (`KEY expects …, got …`), the name being the key, the flag or the variable.
enum SettingValue {
    static func describe(_ value: ConfigValue) -> String {
        switch value {
        case .string(let text): "\"\(text)\""
        case .integer(let number): "\(number)"
        default: value.kind
        }
    }

    static func string(_ value: ConfigValue, _ name: String) throws(ConfigValueError) -> String {
        guard case .string(let text) = value else { throw ConfigValueError("\(name) expects a string, got \(value.kind)") }
        return text
    }

    /// true/false in the file; on/off, true/false, yes/no or 1/0 as text.
    static func boolean(_ value: ConfigValue, _ name: String) throws(ConfigValueError) -> Bool {
        guard case .boolean(let flag) = value else { throw ConfigValueError("\(name) expects true or false, got \(describe(value))") }
        return flag
    }

    static func boolean(_ text: String, _ name: String) throws(ConfigValueError) -> Bool {
        switch text.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default: throw ConfigValueError("\(name) expects on or off, got '\(text)'")
        }
    }

    /// An absolute path in the file or a variable (a service's working directory is not the
    /// file's); a flag's relative path is taken from the working directory.
    static func path(_ text: String, _ name: String, directory: Bool, origin: ServerSetting.Origin?) throws(ConfigValueError) -> String {
        if origin == .flag { return URL(fileURLWithPath: text).standardizedFileURL.path }
        guard text.hasPrefix("/") else {
            throw ConfigValueError("\(name) expects an absolute \(directory ? "directory" : "file") path, got '\(text)'")
        }
        return text
    }

    static func integer(_ value: ConfigValue, _ name: String, in range: ClosedRange<Int>, expects: String, separator: String = ",") throws(ConfigValueError)
        -> Int
    {
        guard case .integer(let number) = value, range.contains(number) else {
            throw ConfigValueError("\(name) expects \(expects)\(separator) got \(describe(value))")
        }
        return number
    }

    static func integer(_ text: String, _ name: String, in range: ClosedRange<Int>, expects: String, separator: String = ",") throws(ConfigValueError) -> Int {
        guard let number = Int(text), range.contains(number) else { throw ConfigValueError("\(name) expects \(expects)\(separator) got '\(text)'") }
        return number
    }

    static func interval(_ value: ConfigValue, _ name: String, expects: String) throws(ConfigValueError) -> ScanInterval {
        guard let interval = ScanInterval.parse(value) else { throw ConfigValueError("\(name) expects \(expects); got \(describe(value))") }
        return interval
    }

    static func interval(_ text: String, _ name: String, expects: String) throws(ConfigValueError) -> ScanInterval {
        guard let interval = ScanInterval.parse(text) else { throw ConfigValueError("\(name) expects \(expects); got '\(text)'") }
        return interval
    }

    static func listen(_ text: String, _ name: String) throws(ConfigValueError) -> ListenAddress {
        guard let address = ListenAddress.parse(text) else {
            throw ConfigValueError("\(name) expects ADDR:PORT with an IP address (127.0.0.1:4040, [::1]:4040, 0.0.0.0:4040), got '\(text)'")
        }
        return address
    }

    static func proxies(_ texts: [String], _ name: String) throws(ConfigValueError) -> [String] {
        for text in texts where IPNetwork(text) == nil {
            throw ConfigValueError("\(name) expects IP addresses or CIDR ranges (127.0.0.1, 10.0.0.0/8, fd00::/8), got '\(text)'")
        }
        return texts
    }

    /// `/music` as given, `/music/` without its slash, `/` as empty (the root).
    static func basePath(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        var path = text
        while path.hasSuffix("/") { path.removeLast() }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard text.hasPrefix("/"), !segments.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }),
            path.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && !"?#%\\\"<>".unicodeScalars.contains($0) })
        else {
            throw ConfigValueError("\(name) expects a path such as /music (a slash, then plain path segments), got '\(text)'")
        }
        return path
    }

    static func publicURL(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), !(parsed.host ?? "").isEmpty,
            parsed.query == nil, parsed.fragment == nil
        else {
            throw ConfigValueError("\(name) expects an http or https URL such as https://home.example/music, got '\(text)'")
        }
        return url
    }

    /// A key or secret: printable ASCII without spaces.
    static func token(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.count <= 256, text.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0.asciiValue.map { $0 >= 0x21 && $0 < 0x7f } == true })
        else {
            throw ConfigValueError(
                "\(name) expects a key of printable characters without spaces, got \(text.isEmpty ? "an empty string" : "'\(text.prefix(8))…'")")
        }
        return text
    }

    static func headerName(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ConfigValueError("\(name) expects an HTTP header name such as Remote-User, got '\(text)'")
        }
        return text
    }

    static func ldapURL(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        let lower = text.lowercased()
        guard lower.hasPrefix("ldap://") || lower.hasPrefix("ldaps://"), text.count > 8 else {
            throw ConfigValueError("\(name) expects ldap://HOST[:PORT] or ldaps://HOST[:PORT], got '\(text)'")
        }
        return text
    }

    static func withUser(_ text: String, _ name: String, filter: Bool) throws(ConfigValueError) -> String {
        guard text.contains("{user}"), !filter || (text.hasPrefix("(") && text.hasSuffix(")")) else {
            throw ConfigValueError(
                "\(name) expects \(filter ? "an LDAP filter in parentheses" : "a DN") with {user} where the name goes, got '\(text)'")
        }
        return text
    }

    static func nonEmpty(_ text: String, _ name: String, expects: String) throws(ConfigValueError) -> String {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw ConfigValueError("\(name) expects \(expects), got an empty value") }
        return text
    }

    static func browse(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        guard text == "folders" || text == "tags" else { throw ConfigValueError("\(name) expects folders or tags, got '\(text)'") }
        return text
    }

    static func logFormat(_ text: String, _ name: String) throws(ConfigValueError) -> ServerLog.Format {
        guard let format = ServerLog.Format(rawValue: text) else { throw ConfigValueError("\(name) expects \"text\" or \"json\", got '\(text)'") }
        return format
    }

    static func audioOutput(_ text: String, _ name: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "," }) else {
            throw ConfigValueError("\(name) expects an mpv audio output name such as pulse, alsa or null, got '\(text)'")
        }
        return text
    }

    /// A music folder from a flag must exist now; from the file or a variable only its form is
    /// checked: a folder on a network mount may not be there yet when the server starts (or
    /// reloads), and a scan reports a folder it cannot read.
    /// `NAME=DIR` names the library the folder belongs to (a path starts with `/`, so a name
    /// cannot be mistaken for one); a bare DIR joins the first library.
    static func musicFolder(_ text: String, _ name: String, origin: ServerSetting.Origin?) throws(ConfigValueError) -> String {
        let (library, folder) = splitMusic(text)
        if let library {
            guard !library.isEmpty, !library.contains(","), library.count <= 64 else {
                throw ConfigValueError("\(name): '\(library)' is not a library name (1–64 characters, no ',')")
            }
            return library + "=" + (try musicFolder(folder, name, origin: origin))
        }
        if origin == .flag {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: text, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ConfigValueError("\(name) expects a directory, got '\(text)'")
            }
            return URL(fileURLWithPath: text).standardizedFileURL.path
        }
        guard text.hasPrefix("/") else { throw ConfigValueError("\(name): '\(text)' is not an absolute path") }
        return text
    }

    /// A `music` entry's library name (nil for a bare folder) and folder.
    static func splitMusic(_ text: String) -> (library: String?, folder: String) {
        guard !text.hasPrefix("/"), let equals = text.firstIndex(of: "=") else { return (nil, text) }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}

// MARK: - The table

extension ServerConfig {
    private static let scanForms = "seconds (1 or more), a string such as \"90s\", \"30m\", \"6h\" or \"1d\", or 0 or \"off\""

    /// Every setting of `shelf serve`, in the order the documentation lists them.
    public static let settings: [ServerSetting] = [
        ServerSetting(
            "library", \.library, takes: "an absolute directory path",
            default: "$SHELF_LIBRARY, else $XDG_DATA_HOME/shelf, else ~/.local/share/shelf", reloads: false,
            help:
                "The library directory (the global --library flag and SHELF_LIBRARY win over it). The service unit makes /var/lib/shelf its one writable path.",
            example: "\"/var/lib/shelf\"", exampleActive: true, directory: true),
        ServerSetting(
            "listen", \.listen, flag: .value("ADDR:PORT"), takes: "ADDR:PORT (an IPv4 literal, or IPv6 in brackets)", default: "127.0.0.1:4040",
            reloads: false, help: "The address to listen on: an IP literal and a port (use the LAN address for phones).",
            example: "\"127.0.0.1:4040\"", exampleActive: true,
            file: { (value, name) throws(ConfigValueError) in try SettingValue.listen(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.listen(text, name) }),
        ServerSetting(
            "tls-cert", \.tlsCert, flag: .value("FILE"), takes: "an absolute file path", default: "none (plain HTTP)", reloads: false,
            help: "Serve HTTPS with this PEM certificate; tls-cert and tls-key go together (files the service user can read).",
            example: "\"/etc/shelf/cert.pem\"", completion: .file, directory: false),
        ServerSetting(
            "tls-key", \.tlsKey, flag: .value("FILE"), takes: "an absolute file path", default: "none", reloads: false,
            help: "The PEM private key of tls-cert.", example: "\"/etc/shelf/key.pem\"", completion: .file, directory: false),
        ServerSetting(
            "trusted-proxies", \.trustedProxies, flag: .value("ADDRS"),
            takes: "an array of IP addresses and CIDR ranges (the flag and SHELF_TRUSTED_PROXIES: separated by commas)", default: "none",
            reloads: false,
            help:
                "The reverse proxies in front of Shelf. Only from these are Forwarded, X-Forwarded-For, X-Forwarded-Proto and X-Forwarded-Host believed: the client's address is then the right-most one no trusted proxy stands for, and it is what the per-address limits (counted per request behind a proxy), the sign-in throttle and the log use. A trusted proxy's own connections are not limited per address. From any other address those headers are ignored.",
            example: "[\"127.0.0.1\", \"10.0.0.0/8\"]",
            file: { (value, name) throws(ConfigValueError) in
                switch value {
                case .strings(let list): return try SettingValue.proxies(list, name)
                case .string(let one): return try SettingValue.proxies([one], name)
                default: throw ConfigValueError("\(name) expects an array of IP addresses or CIDR ranges, got \(value.kind)")
                }
            },
            text: { (text, name, _) throws(ConfigValueError) in
                try SettingValue.proxies(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }, name)
            }),
        ServerSetting(
            "base-path", \.basePath, flag: .value("PATH"), takes: "a path such as /music", default: "none (the root)", reloads: false,
            help:
                "Serve everything under this path, as a proxy does at https://home.example/music/: the page, the native API, /rest/, shares, events, pictures and streams. Every link Shelf writes carries it, and the session cookie is limited to it.",
            example: "\"/music\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.basePath(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.basePath(text, name) }),
        ServerSetting(
            "public-url", \.publicURL, flag: .value("URL"), takes: "an http or https URL", default: "from each request's host",
            reloads: false,
            help:
                "The address people reach Shelf under, base path included (https://home.example/music), for the absolute links Shelf writes (share links) when the proxy does not pass the host.",
            example: "\"https://home.example/music\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.publicURL(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.publicURL(text, name) }),
        ServerSetting(
            "auth-header", \.authHeader, flag: .value("HEADER"), takes: "an HTTP header name", default: "none (off)", reloads: false,
            help:
                "Sign the web page in as the user a trusted proxy names in this header (Remote-User from Authelia, Authentik or oauth2-proxy), believed only from trusted-proxies. Apps keep using API keys or passwords; local users and sign-in keep working.",
            example: "\"Remote-User\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.headerName(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.headerName(text, name) }),
        ServerSetting(
            "auth-header-create-users", \.authHeaderCreateUsers, flag: .presence, takes: "true or false", default: "off", reloads: false,
            help: "Make a user of a name the proxy signs in that Shelf does not know yet (with a password nobody knows: they sign in through the proxy).",
            example: "true"),
        ServerSetting(
            "auth-header-admin-group", \.authHeaderAdminGroup, flag: .value("GROUP"), takes: "a group name", default: "none",
            reloads: false,
            help: "A user made by auth-header-create-users is an admin when this group is among those the proxy lists in Remote-Groups.",
            example: "\"admins\"",
            file: { (value, name) throws(ConfigValueError) in
                let group = try SettingValue.string(value, name)
                guard !group.isEmpty else { throw ConfigValueError("\(name) expects a group name, got an empty string") }
                return group
            },
            text: { (text, name, _) throws(ConfigValueError) in
                guard !text.isEmpty else { throw ConfigValueError("\(name) expects a group name, got an empty value") }
                return text
            }),
        ServerSetting(
            "ldap-url", \.ldapURL, flag: .value("URL"), takes: "ldap://HOST[:PORT] or ldaps://HOST[:PORT]", default: "none (off)", reloads: false,
            help:
                "Sign people in through this LDAP directory as well as the local users: a name the directory vouches for becomes a Shelf user at its first sign-in and is refreshed at each. Subsonic apps sign such users in with an API key or a plain or enc: password (checked by a bind, kept a minute); the t+s token cannot work without the password in Shelf. An admin can always sign in locally.",
            example: "\"ldaps://ldap.example.org\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.ldapURL(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.ldapURL(text, name) }),
        ServerSetting(
            "ldap-starttls", \.ldapStartTLS, flag: .value("on|off"), takes: "true or false (the flag and variable: on or off)", default: "on",
            reloads: false, help: "Upgrade an ldap:// connection with StartTLS before any password is sent; off only for a directory on the same host.",
            example: "false", completion: .choices(["on", "off"])),
        ServerSetting(
            "ldap-user-dn", \.ldapUserDN, flag: .value("TEMPLATE"), takes: "a DN with {user}", default: "none (search with ldap-base and ldap-filter)",
            reloads: false,
            help:
                "The entry a name signs in as, without a search: {user} is replaced by the name (escaped). With ldap-base too, the filter must also find the entry.",
            example: "\"uid={user},ou=people,dc=example,dc=org\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.withUser(SettingValue.string(value, name), name, filter: false) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.withUser(text, name, filter: false) }),
        ServerSetting(
            "ldap-base", \.ldapBase, flag: .value("DN"), takes: "a DN", default: "none", reloads: false,
            help:
                "Where the search for a name starts (with ldap-filter).",
            example: "\"ou=people,dc=example,dc=org\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.nonEmpty(SettingValue.string(value, name), name, expects: "a DN") },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.nonEmpty(text, name, expects: "a DN") }),
        ServerSetting(
            "ldap-filter", \.ldapFilter, flag: .value("FILTER"), takes: "an LDAP filter with {user}", default: "(uid={user})", reloads: false,
            help:
                "The search that finds a name's entry; an account it leaves out (a disabled one, by the attribute your directory marks it with) cannot sign in, and its sessions end at their next use.",
            example: "\"(&(objectClass=inetOrgPerson)(uid={user})(!(employeeType=disabled)))\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.withUser(SettingValue.string(value, name), name, filter: true) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.withUser(text, name, filter: true) }),
        ServerSetting(
            "ldap-bind-dn", \.ldapBindDN, flag: .value("DN"), takes: "a DN", default: "none (an anonymous search)", reloads: false,
            help:
                "The service account the search binds as.",
            example: "\"cn=shelf,ou=services,dc=example,dc=org\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.nonEmpty(SettingValue.string(value, name), name, expects: "a DN") },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.nonEmpty(text, name, expects: "a DN") }),
        ServerSetting(
            "ldap-bind-password", \.ldapBindPassword, takes: "a password", default: "none", reloads: false,
            help:
                "The service account's password (in a container, SHELF_LDAP_BIND_PASSWORD).",
            example: "\"service-secret\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.string(value, name) },
            text: { (text, name, _) throws(ConfigValueError) in text }),
        ServerSetting(
            "ldap-admin-group", \.ldapAdminGroup, flag: .value("DN"), takes: "a group's DN", default: "none", reloads: false,
            help:
                "Members of this group are admins, by the group's member, uniqueMember or memberUid values or the user's memberOf; checked at each sign-in.",
            example: "\"cn=admins,ou=groups,dc=example,dc=org\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.nonEmpty(SettingValue.string(value, name), name, expects: "a DN") },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.nonEmpty(text, name, expects: "a DN") }),
        ServerSetting(
            "ldap-ca-file", \.ldapCAFile, flag: .value("FILE"), takes: "an absolute file path", default: "the system's certificates", reloads: false,
            help:
                "The CA certificate(s) the directory's certificate must be signed by (StartTLS and ldaps://).",
            example: "\"/etc/ssl/certs/ldap-ca.pem\"", directory: false),
        ServerSetting(
            "admin-user", \.adminUser, flag: .value("NAME"), takes: "a user name", default: "none", reloads: false,
            help:
                "On a library with no user yet, make this one (the owner and an admin) with the password in admin-password-file, then serve: how a new container gets its first admin (SHELF_ADMIN_USER, SHELF_ADMIN_PASSWORD_FILE). Ignored once there is a user.",
            example: "\"admin\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.nonEmpty(SettingValue.string(value, name), name, expects: "a user name") },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.nonEmpty(text, name, expects: "a user name") }),
        ServerSetting(
            "admin-password-file", \.adminPasswordFile, flag: .value("FILE"), takes: "an absolute file path", default: "none", reloads: false,
            help: "The file whose first line is admin-user's password (a container secret, such as /run/secrets/shelf-admin).",
            example: "\"/run/secrets/shelf-admin\"", completion: .file, directory: false),
        ServerSetting(
            "start-without-users", \.startWithoutUsers, flag: .presence, takes: "true or false", default: "off", reloads: false,
            help:
                "Serve a library that has no user yet, logging the command that makes the first, instead of stopping with that command (the container image turns this on).",
            example: "true"),
        ServerSetting(
            "max-transcodes", \.maxTranscodes, flag: .value("N"), takes: "an integer from 1 to 256", default: "the number of cores", reloads: true,
            help: "The most ffmpeg transcodes at once.", example: "4",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.integer(value, name, in: 1...256, expects: "an integer from 1 to 256") },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.integer(text, name, in: 1...256, expects: "an integer from 1 to 256") }),
        ServerSetting(
            "music", \.music, flag: .repeated("[NAME=]DIR"),
            takes: "an array of absolute directory paths, each optionally NAME= its library (SHELF_MUSIC: separated by colons)",
            default: "none (startScan is refused)", reloads: true,
            help:
                "The folders scans import from (startScan, the schedule and the watcher); the flag is repeatable and replaces the file's list. NAME=DIR makes the folder a root of the library NAME (made when there is none; see `shelf library`); a bare DIR joins the first library. In the file and the variable only their form is checked: a folder not mounted yet is reported by the scan that cannot read it.",
            example: "[\"/srv/music\", \"Audiobooks=/srv/audiobooks\"]", completion: .directory,
            file: { (value, name) throws(ConfigValueError) in
                guard case .strings(let folders) = value else { throw ConfigValueError("\(name) expects an array of directory paths, got \(value.kind)") }
                return try folders.map { (folder) throws(ConfigValueError) in try SettingValue.musicFolder(folder, name, origin: nil) }
            },
            text: { (text, name, origin) throws(ConfigValueError) in
                // A variable holds the whole list; a flag one folder per occurrence.
                let folders = origin == .environment ? text.split(separator: ":").map(String.init) : [text]
                return try folders.map { (folder) throws(ConfigValueError) in try SettingValue.musicFolder(folder, name, origin: origin) }
            }),
        ServerSetting(
            "scan-interval", \.scanInterval, flag: .value("DURATION"), takes: "seconds, or \"90s\", \"30m\", \"6h\", \"1d\"; 0 or \"off\"",
            default: "off", reloads: true,
            help: "Scan the music folders at start and this long after each scan ends, at most a year (366 days); off: only on startScan.",
            example: "\"6h\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.interval(value, name, expects: scanForms) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.interval(text, name, expects: scanForms) }),
        ServerSetting(
            "purge-missing-after", \.purgeMissingAfter, flag: .value("DURATION"), takes: "seconds, or a string such as \"30d\"; 0 or \"off\"",
            default: "off", reloads: true,
            help:
                "Remove tracks whose files have been missing this long; off: never. Tracks of a music root that is offline (unmounted, gone) are never removed.",
            example: "\"90d\"",
            file: { (value, name) throws(ConfigValueError) in
                try SettingValue.interval(value, name, expects: "seconds (1 or more), a string such as \"30d\", or 0 or \"off\"")
            },
            text: { (text, name, _) throws(ConfigValueError) in
                try SettingValue.interval(text, name, expects: "seconds (1 or more), a string such as \"30d\", or 0 or \"off\"")
            }),
        ServerSetting(
            "watch", \.watch, flag: .value("on|off"), takes: "true or false (the flag and variable: on or off)", default: "on", reloads: true,
            help:
                "Watch the music folders (inotify) and bring files added, changed, moved or deleted into the library within seconds. Needs fs.inotify.max_user_watches above the number of folders (the log says so, with the sysctl line, when it is not; unwatched folders wait for the scans).",
            example: "false", completion: .choices(["on", "off"])),
        ServerSetting(
            "loudness", \.loudness, flag: .presence, takes: "true or false", default: "off", reloads: true,
            help:
                "Measure the loudness (EBU R128, through ffmpeg and libebur128) of tracks without ReplayGain in the background, one at a time and niced, and store it as ReplayGain.",
            example: "true"),
        ServerSetting(
            "analysis", \.analysis, flag: .presence, takes: "true or false", default: "off", reloads: false,
            help:
                "Listen to the tracks in the background (decoded by niced `shelf analyze-worker` processes, as `shelf analyze` does) after imports and watched changes and at least hourly, and store their sonic features for the similarity endpoints: getSonicSimilarTracks, findSonicPath, getSimilarSongs, /api/tracks/{id}/similar and /api/mix.",
            example: "true"),
        ServerSetting(
            "analysis-workers", \.analysisWorkers, takes: "an integer from 1 to 64", default: "1", reloads: false,
            help: "How many analysis worker processes run at once, each decoding one file (one per core the analysis may use).",
            example: "2",
            file: { (value, name) throws(ConfigValueError) in
                try SettingValue.integer(value, name, in: 1...64, expects: "worker processes, an integer from 1 to 64", separator: ";")
            },
            text: { (text, name, _) throws(ConfigValueError) in
                try SettingValue.integer(text, name, in: 1...64, expects: "worker processes, an integer from 1 to 64", separator: ";")
            }),
        ServerSetting(
            "log-format", \.logFormat, flag: .value("text|json"), takes: "\"text\" or \"json\"", default: "text", reloads: true,
            help: "\"text\": one plain line per event; \"json\": one object per line.", example: "\"text\"", exampleActive: true,
            completion: .choices(ServerLog.Format.allCases.map(\.rawValue)),
            file: { (value, name) throws(ConfigValueError) in try SettingValue.logFormat(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.logFormat(text, name) }),
        ServerSetting(
            "log-file", \.logFile, flag: .value("FILE"), takes: "an absolute file path", default: "stderr (the journal)", reloads: true,
            help:
                "Append the log to a file (created 0640) instead of stderr; reopened on SIGHUP, after a rotation. The service can only write under its writable paths.",
            example: "\"/var/lib/shelf/shelf.log\"", completion: .file, directory: false),
        ServerSetting(
            "sharing", \.sharing, flag: .value("on|off"), takes: "true or false (the flag and variable: on or off)", default: "on", reloads: true,
            help: "Whether users may make public share links (/share/TOKEN); off also closes the existing ones.", example: "false",
            completion: .choices(["on", "off"])),
        ServerSetting(
            "subsonic-browse", \.subsonicBrowse, flag: .value("folders|tags"), takes: "\"folders\" or \"tags\"", default: "folders", reloads: true,
            help:
                "What OpenSubsonic's getIndexes and getMusicDirectory walk: folders, the libraries' folders as they are on disk; tags, album artist → album → song. getArtists, getArtist and getAlbum are the same either way.",
            example: "\"folders\"", completion: .choices(["folders", "tags"]),
            file: { (value, name) throws(ConfigValueError) in try SettingValue.browse(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.browse(text, name) }),
        ServerSetting(
            "podcast-dir", \.podcastDir, flag: .value("DIR"), takes: "an absolute directory path", default: "podcasts in the library directory",
            reloads: false, help: "Where podcast episodes and channel pictures are downloaded (one folder per channel).",
            example: "\"/var/lib/shelf/podcasts\"", completion: .directory, directory: true),
        ServerSetting(
            "podcast-allow-private", \.podcastAllowPrivate, flag: .presence, takes: "true or false", default: "off", reloads: false,
            help:
                "Fetch podcast feeds and episodes from private, loopback and link-local addresses too (a feed on the LAN). Refused by default, so a subscribed URL cannot reach the server's own network.",
            example: "true"),
        ServerSetting(
            "podcast-max-episode-size", \.podcastMaxEpisodeSize, takes: "bytes, an integer of 1 or more", default: "2147483648 (2 GiB)",
            reloads: false, help: "The largest podcast episode downloaded, in bytes.", example: "536870912",
            file: { (value, name) throws(ConfigValueError) in
                try SettingValue.integer(value, name, in: 1...Int.max, expects: "a number of bytes (1 or more)")
            },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.integer(text, name, in: 1...Int.max, expects: "a number of bytes (1 or more)")
            }),
        ServerSetting(
            "podcast-refresh", \.podcastRefresh, takes: "seconds, or \"6h\", \"1d\"; 0 or \"off\"", default: "1d", reloads: false,
            help: "How often every podcast channel is refreshed; off: only on request (refreshPodcasts).", example: "\"12h\"",
            file: { (value, name) throws(ConfigValueError) in
                try SettingValue.interval(value, name, expects: "seconds (1 or more), a string such as \"6h\" or \"1d\", or 0 or \"off\"")
            },
            text: { (text, name, _) throws(ConfigValueError) in
                try SettingValue.interval(text, name, expects: "seconds (1 or more), a string such as \"6h\" or \"1d\", or 0 or \"off\"")
            }),
        ServerSetting(
            "listenbrainz-url", \.listenbrainzURL, flag: .value("URL"), takes: "an http or https URL", default: "https://api.listenbrainz.org",
            reloads: false,
            help:
                "The ListenBrainz API users' listens are scrobbled to; a ListenBrainz-compatible server people host themselves works too (Maloja: http://HOST:42010/apis/listenbrainz). A user's own link may name another (shelf user link --url).",
            example: "\"https://api.listenbrainz.org\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.publicURL(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.publicURL(text, name) }),
        ServerSetting(
            "lastfm-url", \.lastfmURL, flag: .value("URL"), takes: "an http or https URL", default: "https://ws.audioscrobbler.com/2.0",
            reloads: false,
            help: "The Last.fm API (Audioscrobbler 2.0) scrobbles go to; a compatible server (Maloja: http://HOST:42010/apis/audioscrobbler/2.0) works too.",
            example: "\"https://ws.audioscrobbler.com/2.0\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.publicURL(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.publicURL(text, name) }),
        ServerSetting(
            "lastfm-api-key", \.lastfmAPIKey, flag: .value("KEY"), takes: "a Last.fm API key", default: "none (Last.fm cannot be linked)",
            reloads: false, help: "The operator's Last.fm API key (https://www.last.fm/api/account/create); users link Last.fm with it.",
            example: "\"0123456789abcdef0123456789abcdef\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.token(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.token(text, name) }),
        ServerSetting(
            "lastfm-secret", \.lastfmSecret, flag: .value("SECRET"), takes: "the API key's shared secret", default: "none",
            reloads: false, help: "The shared secret of lastfm-api-key, which signs every call to Last.fm. Keep the config file private.",
            example: "\"0123456789abcdef0123456789abcdef\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.token(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.token(text, name) }),
        ServerSetting(
            "jukebox", \.jukebox, flag: .presence, takes: "true or false", default: "off", reloads: false,
            help:
                "The jukebox: jukeboxControl plays on this machine's audio output through mpv (an optional Debian package), for admins and the users with the jukebox role.",
            example: "true"),
        ServerSetting(
            "jukebox-audio-output", \.jukeboxAudioOutput, takes: "an mpv audio output name (pulse, alsa, pipewire, null, …)",
            default: "mpv's own choice", reloads: false,
            help: "mpv's audio output for the jukebox (`mpv --ao=help` lists them); null plays to nothing.", example: "\"alsa\"",
            file: { (value, name) throws(ConfigValueError) in try SettingValue.audioOutput(SettingValue.string(value, name), name) },
            text: { (text, name, _) throws(ConfigValueError) in try SettingValue.audioOutput(text, name) }),
        ServerSetting(
            "backup-dir", \.backupDir, takes: "an absolute directory path", default: "none (no scheduled backups)", reloads: false,
            help:
                "Back the library up into this folder on a schedule: one file per backup, named shelf-YYYYMMDD-HHMMSS.shelfbackup (UTC), mode 0600 because the library's secret key is inside (restore one with `shelf restore FILE`). The folder is made (mode 0700) if it is missing; under the service unit it must be writable (under /var/lib/shelf, or added to ReadWritePaths). The admin page lists the backups and takes one on request.",
            example: "\"/var/lib/shelf/backups\"", directory: true),
        ServerSetting(
            "backup-keep", \.backupKeep, takes: "an integer of 1 or more", default: "7", reloads: false,
            help:
                "How many backups backup-dir keeps: after each backup the oldest beyond this many (by the time in their names) are deleted; other files in the folder are left alone.",
            example: "14",
            file: { (value, name) throws(ConfigValueError) in
                try SettingValue.integer(value, name, in: 1...Int.max, expects: "how many backups to keep, an integer of 1 or more", separator: ";")
            },
            text: { (text, name, _) throws(ConfigValueError) in
                try SettingValue.integer(text, name, in: 1...Int.max, expects: "how many backups to keep, an integer of 1 or more", separator: ";")
            }),
        ServerSetting(
            "backup-every", \.backupEvery, takes: "seconds, or \"6h\", \"1d\"", default: "1d", reloads: false,
            help:
                "How often a backup is taken, counted from the end of the last one. The first is one interval after the newest backup in the folder, or a minute after start when that is overdue (or there is none).",
            example: "\"12h\"",
            file: { (value, name) throws(ConfigValueError) in
                // The scan interval's forms, without its "off": leaving out backup-dir is how backups are turned off.
                guard case .seconds(let seconds)? = ScanInterval.parse(value) else {
                    throw ConfigValueError(
                        "\(name) expects seconds (1 or more) or a string such as \"6h\" or \"1d\"; got \(SettingValue.describe(value))")
                }
                return seconds
            },
            text: { (text, name, _) throws(ConfigValueError) in
                guard case .seconds(let seconds)? = ScanInterval.parse(text) else {
                    throw ConfigValueError("\(name) expects seconds (1 or more) or a string such as \"6h\" or \"1d\"; got '\(text)'")
                }
                return seconds
            }),
    ]

    /// The setting with this key.
    public static func setting(_ key: String) -> ServerSetting? { settings.first { $0.key == key } }

    /// The settings the environment gives (`SHELF_` + key), each checked as the file's are;
    /// `SHELF_LIBRARY` is left to the command line, which reads it for every command. Throws
    /// every mistake at once, each naming its variable.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(SettingsEnvironmentError)
        -> ServerConfig
    {
        var config = ServerConfig()
        var mistakes: [String] = []
        for setting in settings where setting.key != "library" {
            guard let text = environment[setting.environmentVariable], !text.isEmpty else { continue }
            do throws(ConfigValueError) {
                try setting.read(text: text, name: setting.environmentVariable, origin: .environment, into: &config)
            } catch {
                mistakes.append(error.reason)
            }
        }
        if config.tlsCert != nil, config.tlsKey == nil { mistakes.append("SHELF_TLS_CERT needs SHELF_TLS_KEY too") }
        if config.tlsKey != nil, config.tlsCert == nil { mistakes.append("SHELF_TLS_KEY needs SHELF_TLS_CERT too") }
        guard mistakes.isEmpty else { throw SettingsEnvironmentError(mistakes: mistakes) }
        return config
    }

    /// `self` over `lower`: each setting this config sets wins, the rest come from `lower`
    /// (flags over the environment over the file). Presets are the file's alone.
    public func over(_ lower: ServerConfig) -> ServerConfig {
        var merged = lower
        for setting in Self.settings { setting.copy(from: self, into: &merged) }
        if !presets.isEmpty { merged.presets = presets }
        return merged
    }

    /// The keys whose values differ between the two and that SIGHUP cannot apply.
    public func needsRestart(comparedTo other: ServerConfig) -> [String] {
        Self.settings.filter { !$0.reloads && !$0.same(self, other) }.map(\.key)
    }
}

/// Mistakes in the `SHELF_*` environment variables, each naming its variable.
public struct SettingsEnvironmentError: Error, Sendable, CustomStringConvertible {
    /// One line per mistake.
    public let mistakes: [String]
    public var description: String { mistakes.joined(separator: "; ") }
}

/// Everything `shelf serve` runs with: the merged config (flags over the environment over the
/// file) with the defaults filled in. The defaults are here, once; `ServerSetting.defaultText`
/// says them in words.
public struct ServerSettings: Sendable, Equatable {
    public var listen = ListenAddress(host: "127.0.0.1", port: 4040)
    public var tls: TLSFiles?
    public var maxTranscodes = ProcessInfo.processInfo.activeProcessorCount
    public var trustedProxies: [IPNetwork] = []
    public var basePath = ""
    public var publicURL: String?
    public var authHeader: String?
    public var authHeaderCreateUsers = false
    public var authHeaderAdminGroup: String?
    public var directory: DirectorySettings?
    public var adminUser: String?
    public var adminPasswordFile: String?
    public var startWithoutUsers = false
    public var music: [URL] = []
    /// The library each `NAME=DIR` entry of `music` names, by the folder's path.
    public var musicLibraries: [String: String] = [:]
    public var scanInterval = ScanInterval.off
    public var purgeMissingAfter = ScanInterval.off
    public var watch = true
    public var loudness = false
    public var analysis = false
    public var analysisWorkers = 1
    public var logFormat = ServerLog.Format.text
    public var logFile: String?
    public var presets: [String: TranscodePreset] = [:]
    public var library: String?
    public var sharing = true
    /// Whether Subsonic's getIndexes and getMusicDirectory walk folders (`subsonic-browse`).
    public var browseFolders = true
    public var podcastDir: String?
    public var podcastAllowPrivate = false
    public var podcastMaxEpisodeSize: Int?
    public var podcastRefresh = ScanInterval.seconds(86_400)
    public var jukebox = false
    public var jukeboxAudioOutput: String?
    public var backupDir: String?
    public var backupKeep = 7
    public var backupEvery = 86_400
    /// Where scrobbles go, and the operator's Last.fm key.
    public var scrobbling = ScrobbleSettings()
    /// The merged config these came from, for the restart check of a reload.
    public var config = ServerConfig()

    /// The certificate and key files of HTTPS.
    public struct TLSFiles: Sendable, Equatable {
        public var certificate: String
        public var key: String
    }

    /// `config` (already merged from its sources) over the defaults.
    public init(_ config: ServerConfig) {
        self.config = config
        listen = config.listen ?? listen
        if let certificate = config.tlsCert, let key = config.tlsKey { tls = TLSFiles(certificate: certificate, key: key) }
        maxTranscodes = config.maxTranscodes ?? maxTranscodes
        trustedProxies = (config.trustedProxies ?? []).compactMap(IPNetwork.init)
        basePath = config.basePath ?? basePath
        publicURL = config.publicURL
        authHeader = config.authHeader
        authHeaderCreateUsers = config.authHeaderCreateUsers ?? authHeaderCreateUsers
        authHeaderAdminGroup = config.authHeaderAdminGroup
        adminUser = config.adminUser
        adminPasswordFile = config.adminPasswordFile
        startWithoutUsers = config.startWithoutUsers ?? startWithoutUsers
        if let url = config.ldapURL {
            var ldap = DirectorySettings(url: url)
            ldap.startTLS = config.ldapStartTLS ?? true
            ldap.userDN = config.ldapUserDN
            ldap.base = config.ldapBase
            ldap.filter = config.ldapFilter ?? ldap.filter
            ldap.bindDN = config.ldapBindDN
            ldap.bindPassword = config.ldapBindPassword
            ldap.adminGroup = config.ldapAdminGroup
            ldap.caFile = config.ldapCAFile
            directory = ldap
        }
        let entries = (config.music ?? []).map(SettingValue.splitMusic)
        music = entries.map { URL(fileURLWithPath: $0.folder).standardizedFileURL }
        musicLibraries = Dictionary(
            entries.compactMap { entry in entry.library.map { (URL(fileURLWithPath: entry.folder).standardizedFileURL.path, $0) } },
            uniquingKeysWith: { first, _ in first })
        scanInterval = config.scanInterval ?? scanInterval
        purgeMissingAfter = config.purgeMissingAfter ?? purgeMissingAfter
        watch = config.watch ?? watch
        loudness = config.loudness ?? loudness
        analysis = config.analysis ?? analysis
        analysisWorkers = config.analysisWorkers ?? analysisWorkers
        logFormat = config.logFormat ?? logFormat
        logFile = config.logFile
        presets = config.presets
        library = config.library
        sharing = config.sharing ?? sharing
        browseFolders = (config.subsonicBrowse ?? "folders") == "folders"
        podcastDir = config.podcastDir
        podcastAllowPrivate = config.podcastAllowPrivate ?? podcastAllowPrivate
        podcastMaxEpisodeSize = config.podcastMaxEpisodeSize
        podcastRefresh = config.podcastRefresh ?? podcastRefresh
        jukebox = config.jukebox ?? jukebox
        jukeboxAudioOutput = config.jukeboxAudioOutput
        backupDir = config.backupDir
        backupKeep = config.backupKeep ?? backupKeep
        backupEvery = config.backupEvery ?? backupEvery
        scrobbling.listenbrainzURL = config.listenbrainzURL ?? scrobbling.listenbrainzURL
        scrobbling.lastfmURL = config.lastfmURL ?? scrobbling.lastfmURL
        scrobbling.lastfmAPIKey = config.lastfmAPIKey
        scrobbling.lastfmSecret = config.lastfmSecret
    }

    /// The keys SIGHUP cannot change that differ from `other`, for the line that says a restart is needed.
    public func needsRestart(comparedTo other: ServerSettings) -> [String] { config.needsRestart(comparedTo: other.config) }
}

// MARK: - Generated documents

extension ServerConfig {
    /// The example config file (`contrib/config.toml`, `shelf config example`): every key with its
    /// help, default and whether a reload applies it, commented out unless the service sets it.
    public static func exampleFile() -> String {
        var text = """
            # /etc/shelf/config.toml: shelf serve's settings (check with `shelf config check FILE`).
            # Generated from Shelf's settings table by `shelf config example`; docs/config.md has the same.
            # Every key is optional; each is shown with its default. Flags given to `shelf serve` win over
            # the environment (SHELF_ and the key in capitals, e.g. SHELF_MAX_TRANSCODES), which wins over
            # this file. Paths are absolute. SIGHUP (`systemctl reload shelf`) rereads the keys marked
            # "Reloads."; the others apply after a restart.

            """
        for setting in settings {
            text += "\n"
            let note = "\(setting.help) Takes \(setting.takes). Default: \(setting.defaultText). \(setting.reloads ? "Reloads." : "Needs a restart.")"
            for line in wrap(note, width: 98) { text += "# \(line)\n" }
            text += "\(setting.exampleActive ? "" : "# ")\(setting.key) = \(setting.example)\n"
        }
        text += """

            # Named transcodes a client may ask for as `format=NAME` (/api/stream and Subsonic stream):
            # "FORMAT" or "FORMAT:KBPS", FORMAT one of opus, mp3, aac, flac; 128 kbit/s when not said. Reloads.
            [presets]
            # mobile = "opus:96"
            # car = "mp3:192"

            """
        return text
    }

    /// `docs/config.md` (`shelf config reference`): every setting with its key, flag, variable,
    /// value, default, reload and help.
    public static func markdownReference() -> String {
        var text = """
            # `shelf serve` settings

            Generated from Shelf's settings table (`ServerConfig.settings`) by `shelf config reference`; a test fails
            when this page is out of date. Each setting is a key of the config file (TOML; `shelf config check FILE`
            checks one), an environment variable, and for most a flag of `shelf serve`. A flag wins over the
            variable, the variable over the file, the file over the default. A bad value in a variable stops
            `shelf serve` with a message naming the variable. SIGHUP (`systemctl reload shelf`) rereads the file
            and applies the settings marked "reloads"; the others need a restart. `contrib/config.toml` is an
            example with every key (`shelf config example`).

            | key | flag | variable | reloads | default |
            |---|---|---|---|---|

            """
        for setting in settings {
            let flag = setting.flag.map { "`\($0)\(setting.placeholder.map { " \($0)" } ?? "")`" } ?? "—"
            text +=
                "| [`\(setting.key)`](#\(setting.key)) | \(flag) | `\(setting.environmentVariable)` | \(setting.reloads ? "yes" : "no") | \(setting.defaultText) |\n"
        }
        for setting in settings {
            text += "\n## \(setting.key)\n\n\(setting.help)\n\n"
            text += "- Takes: \(setting.takes).\n- Default: \(setting.defaultText).\n"
            if let flag = setting.flag {
                let form =
                    switch setting.flagForm {
                    case .presence: "`\(flag)` (turns it on)"
                    case .repeated(let value): "`\(flag) \(value)`, repeatable"
                    case .value(let value): "`\(flag) \(value)`"
                    case .none: ""
                    }
                text += "- Flag: \(form).\n"
            }
            text +=
                setting.key == "library"
                ? "- Variable: `SHELF_LIBRARY` (read by every command, like `--library`).\n" : "- Variable: `\(setting.environmentVariable)`.\n"
            text += "- \(setting.reloads ? "SIGHUP applies a change at once" : "A change needs a restart").\n"
            text += "- Example: `\(setting.key) = \(setting.example)`\n"
        }
        text += """

            ## [presets]

            Named transcodes a client may ask for as `format=NAME` (/api/stream and Subsonic stream): `"FORMAT"` or
            `"FORMAT:KBPS"`, FORMAT one of opus, mp3, aac, flac; 128 kbit/s when not said. File only; SIGHUP applies
            a change.

            ```toml
            [presets]
            mobile = "opus:96"
            car = "mp3:192"
            ```

            """
        return text
    }

    /// `text` in lines of at most `width` characters, broken at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
