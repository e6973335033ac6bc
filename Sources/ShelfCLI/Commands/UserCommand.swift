import Foundation
import Shelf
import ShelfCore
import ShelfServer

/// `shelf user`: the people who sign in to `shelf serve`, their passwords and API keys.
/// Passwords never appear on the command line (where `ps` and shell history would show them):
/// they are asked on the terminal without echo, or read from stdin with `--password-stdin`.
struct UserCommand: Command {
    static let name = "user"
    static let abstract =
        "Users of the server: add (the first is the owner and an admin), list, show, update (which libraries they see), passwd, delete, key (create one, shown once, or --revoke), link and unlink a scrobbling service."
    static let synopsis = """
        add NAME [--admin] [--libraries all|A,B] [--password-stdin] | list | update NAME --libraries all|A,B
              | passwd NAME [--password-stdin] | delete NAME | key NAME [--revoke KEY_ID] | show NAME
              | link NAME listenbrainz --token-stdin [--url URL] | link NAME lastfm --username U --password-stdin [--url URL]
              | unlink NAME listenbrainz|lastfm   [--json]
        """

    enum Action {
        case add(name: String, admin: Bool)
        case list
        case update(name: String)
        case passwd(name: String)
        case delete(name: String)
        case key(name: String, revoke: String?)
        case show(name: String)
        case link(name: String, service: ScrobbleService)
        case unlink(name: String, service: ScrobbleService)
    }

    let action: Action
    let passwordFromStdin: Bool
    let tokenFromStdin: Bool
    /// `--url`: a link's own service address; `--username`: the Last.fm account.
    let url: String?
    let username: String?
    /// `--libraries`: nil when not given; `.some(nil)` for `all`; else the names.
    let libraries: [String]??

    init(arguments: inout Arguments) throws {
        let admin = arguments.flag("--admin")
        let libraries = try arguments.option("--libraries")
        self.libraries = try libraries.map { text -> [String]? in
            if text.lowercased() == "all" { return nil }
            let names = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !names.isEmpty || text.isEmpty else { throw UsageError("--libraries expects all or library names separated by commas") }
            return names
        }
        passwordFromStdin = arguments.flag("--password-stdin")
        tokenFromStdin = arguments.flag("--token-stdin")
        url = try arguments.option("--url").map { text in
            var url = text
            while url.hasSuffix("/") { url.removeLast() }
            guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), !(parsed.host ?? "").isEmpty else {
                throw UsageError("--url expects an http or https URL such as http://127.0.0.1:42010/apis/listenbrainz, got '\(text)'")
            }
            return url
        }
        username = try arguments.option("--username")
        let revoke = try arguments.option("--revoke")
        var words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("user expects add, list, show, update, passwd, delete, key, link or unlink") }
        let verb = words.removeFirst()
        func name() throws -> String {
            guard words.count == 1 else { throw UsageError("user \(verb) expects one NAME") }
            return words[0]
        }
        func service() throws -> (String, ScrobbleService) {
            guard words.count == 2 else { throw UsageError("user \(verb) expects NAME and a service, listenbrainz or lastfm") }
            guard let service = ScrobbleService(rawValue: words[1].lowercased()) else {
                throw UsageError("unknown service '\(words[1])'; expected listenbrainz or lastfm")
            }
            return (words[0], service)
        }
        switch verb {
        case "add": action = .add(name: try name(), admin: admin)
        case "list":
            guard words.isEmpty else { throw UsageError("user list takes no arguments") }
            action = .list
        case "update": action = .update(name: try name())
        case "passwd": action = .passwd(name: try name())
        case "delete": action = .delete(name: try name())
        case "key": action = .key(name: try name(), revoke: revoke)
        case "show": action = .show(name: try name())
        case "link":
            let (name, service) = try service()
            action = .link(name: name, service: service)
        case "unlink":
            let (name, service) = try service()
            action = .unlink(name: name, service: service)
        default: throw UsageError("unknown user action '\(verb)'; expected add, list, show, update, passwd, delete, key, link or unlink")
        }
        if admin, case .add = action {} else if admin { throw UsageError("--admin applies to user add only") }
        if revoke != nil, case .key = action {} else if revoke != nil { throw UsageError("--revoke applies to user key only") }
        switch action {
        case .add: break
        case .update: if libraries == nil { throw UsageError("user update expects --libraries all|A,B") }
        default: if libraries != nil { throw UsageError("--libraries applies to user add and user update only") }
        }
        switch action {
        case .add, .passwd, .link(_, .lastfm): break
        default: if passwordFromStdin { throw UsageError("--password-stdin applies to user add, user passwd and user link NAME lastfm only") }
        }
        switch action {
        case .link(_, .listenbrainz):
            guard tokenFromStdin else { throw UsageError("user link NAME listenbrainz expects --token-stdin (the token from listenbrainz.org/settings)") }
            if username != nil { throw UsageError("--username applies to user link NAME lastfm only") }
        case .link(_, .lastfm):
            guard username != nil, passwordFromStdin else { throw UsageError("user link NAME lastfm expects --username U and --password-stdin") }
            if tokenFromStdin { throw UsageError("--token-stdin applies to user link NAME listenbrainz only") }
        default:
            if tokenFromStdin || url != nil || username != nil { throw UsageError("--token-stdin, --url and --username apply to user link only") }
        }
    }

    /// A user as `list` prints it: the user's fields and their keys (never a key itself).
    struct Listed: Encodable {
        let user: User
        let keys: [Key]
        /// The names of the libraries the user sees; nil: all of them.
        let libraries: [String]?

        struct Key: Encodable {
            let id: String
            let created: Date
            @NullWhenNil var lastUsed: Date?
        }

        func encode(to encoder: any Encoder) throws {
            try user.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(keys, forKey: .keys)
            if let libraries { try container.encode(libraries, forKey: .libraries) } else { try container.encode("all", forKey: .libraries) }
        }
        enum CodingKeys: String, CodingKey { case keys, libraries }
    }

    func run(library: Library, output: Output) async throws {
        switch action {
        case .add(let name, let admin):
            // Checked before asking, so that nobody types a password twice for nothing.
            if let existing = try await library.user(named: name) { throw LibraryError.userExists(existing.name) }
            let access = try await Self.libraryIDs(libraries, library)
            let password = try readPassword(confirm: true)
            var user = try await library.addUser(name: name, password: password, admin: admin)
            if let access {
                try await library.setLibraries(user.id, access)
                user.libraries = access
            }
            if output.json { return try output.printJSON(["user": user]) }
            output.line("added \(user.name) (ID \(user.id)\(Self.roles(user)))")
        case .list:
            var listed: [Listed] = []
            let names = Dictionary(try await library.libraries().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            for user in try await library.users() {
                let keys = try await library.apiKeys(of: user.id).map { Listed.Key(id: $0.id, created: $0.created, lastUsed: $0.lastUsed) }
                listed.append(Listed(user: user, keys: keys, libraries: user.seesAllLibraries ? nil : (user.libraries ?? []).compactMap { names[$0] }))
            }
            if output.json { return try output.printJSON(["users": listed]) }
            if listed.isEmpty { return output.line("no users; add one with `shelf user add NAME`") }
            output.line("ID\tNAME\tROLE\tKEYS\tLIBRARIES\tCREATED")
            for item in listed {
                let role = item.user.isOwner ? "owner" : item.user.isAdmin ? "admin" : "user"
                let access = item.libraries.map { $0.isEmpty ? "none" : $0.joined(separator: ",") } ?? "all"
                output.line("\(item.user.id)\t\(item.user.name)\t\(role)\t\(item.keys.count)\t\(access)\t\(Self.date(item.user.created))")
            }
        case .update(let name):
            var user = try await Self.user(name, library)
            let access = try await Self.libraryIDs(libraries, library)
            try await library.setLibraries(user.id, access)
            user.libraries = access
            if output.json { return try output.printJSON(["user": user]) }
            let names = try await library.libraries().filter { access?.contains($0.id) ?? true }.map(\.name)
            output.line(
                "\(user.name) sees \(access == nil ? "every library" : names.isEmpty ? "no library" : names.joined(separator: ", "))\(user.isAdmin ? " (an admin sees every library whatever the list)" : "")"
            )
        case .passwd(let name):
            let user = try await Self.user(name, library)
            let password = try readPassword(confirm: true)
            try await library.setPassword(user.id, password)
            if output.json { return try output.printJSON(["user": user]) }
            output.line("changed the password of \(user.name); their sessions are ended")
        case .delete(let name):
            let user = try await Self.user(name, library)
            try await library.deleteUser(user.id)
            if output.json { return try output.printJSON(["deleted": user.name]) }
            output.line("deleted \(user.name)")
        case .key(let name, let revoke?):
            let user = try await Self.user(name, library)
            guard try await library.apiKeys(of: user.id).contains(where: { $0.id == revoke }) else {
                throw LibraryError.apiKeyNotFound(revoke)
            }
            try await library.revokeAPIKey(id: revoke)
            if output.json { return try output.printJSON(["revoked": revoke]) }
            output.line("revoked key \(revoke) of \(user.name)")
        case .show(let name):
            let user = try await Self.user(name, library)
            let names = Dictionary(try await library.libraries().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            let keys = try await library.apiKeys(of: user.id).map { Listed.Key(id: $0.id, created: $0.created, lastUsed: $0.lastUsed) }
            let shown = Shown(
                listed: Listed(user: user, keys: keys, libraries: user.seesAllLibraries ? nil : (user.libraries ?? []).compactMap { names[$0] }),
                scrobbling: try await library.scrobbleStates(of: user.id),
                listens: try await library.listenCount(of: user.id))
            if output.json { return try output.printJSON(["user": shown]) }
            let role = user.isOwner ? "owner" : user.isAdmin ? "admin" : "user"
            output.line("\(user.name) (ID \(user.id), \(role)), created \(Self.date(user.created))")
            output.line("libraries: \(shown.listed.libraries.map { $0.isEmpty ? "none" : $0.joined(separator: ", ") } ?? "all")")
            output.line("API keys: \(keys.count); listens: \(shown.listens)")
            if shown.scrobbling.isEmpty { output.line("scrobbling: none linked") }
            for state in shown.scrobbling {
                var line = "\(state.service.title): \(state.state)"
                if !state.account.isEmpty { line += " as \(state.account)" }
                if let reason = state.pauseReason { line += " (\(reason))" }
                line += ", \(state.queued) queued, \(state.sent) sent"
                if state.refused > 0 { line += ", \(state.refused) refused" }
                if let error = state.lastError, state.state == "linked" { line += "; last error: \(error)" }
                output.line(line)
            }
        case .link(let name, let service):
            let user = try await Self.user(name, library)
            let accounts = ScrobbleAccounts(library: library, settings: try Self.scrobbleSettings())
            let state: ScrobbleState
            switch service {
            case .listenbrainz:
                guard let token = Self.readLine(fd: STDIN_FILENO)?.trimmingCharacters(in: .whitespaces), !token.isEmpty else {
                    throw UsageError("--token-stdin: nothing on standard input")
                }
                state = try await Self.linked { try await accounts.linkListenBrainz(user.id, token: token, url: url) }
            case .lastfm:
                let password = try readPassword(confirm: false)
                state = try await Self.linked { try await accounts.linkLastfm(user.id, username: username ?? "", password: password, url: url) }
            }
            if output.json { return try output.printJSON(["scrobbling": state]) }
            output.line("linked \(user.name) to \(service.title)\(state.account.isEmpty ? "" : " as \(state.account)")")
        case .unlink(let name, let service):
            let user = try await Self.user(name, library)
            let queued = try await library.scrobbleStates(of: user.id).first { $0.service == service }?.queued
            let removed = try await library.write { batch in try batch.unlinkScrobbling(user.id, service) }
            guard removed else { throw CommandFailure(code: "notLinked", message: "\(user.name) has not linked \(service.title)") }
            if output.json { return try output.printJSON(["unlinked": service.rawValue, "dropped": String(queued ?? 0)]) }
            output.line("unlinked \(user.name) from \(service.title)\(queued.map { $0 > 0 ? "; \($0) queued listens dropped" : "" } ?? "")")
        case .key(let name, nil):
            let user = try await Self.user(name, library)
            let (info, key) = try await library.createAPIKey(for: user.id)
            if output.json { return try output.printJSON(["id": info.id, "key": key]) }
            output.line(key)
            Output.log("shelf: API key \(info.id) for \(user.name); it is shown only this once")
        }
    }

    /// A user as `show` prints it: `list`'s fields, each linked service and the listens kept.
    struct Shown: Encodable {
        let listed: Listed
        let scrobbling: [ScrobbleState]
        let listens: Int

        func encode(to encoder: any Encoder) throws {
            try listed.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(scrobbling, forKey: .scrobbling)
            try container.encode(listens, forKey: .listens)
        }
        enum CodingKeys: String, CodingKey { case scrobbling, listens }
    }

    /// The scrobble settings `shelf serve` would use: the environment over the config file.
    private static func scrobbleSettings() throws -> ScrobbleSettings {
        do {
            let environment = try ServerConfig.fromEnvironment()
            let file = try ServerConfig.defaultPath().map { try ServerConfig.load(path: $0) } ?? ServerConfig()
            return ServerSettings(environment.over(file)).scrobbling
        } catch {
            throw UsageError("\(error)")
        }
    }

    /// A link's refusal as the command's failure (the service's own words).
    private static func linked(_ body: () async throws -> ScrobbleState) async throws -> ScrobbleState {
        do {
            return try await body()
        } catch let error as ScrobbleError {
            throw CommandFailure(code: error.refusedCredentials ? "refused" : "unreachable", message: error.message)
        }
    }

    private static func user(_ name: String, _ library: Library) async throws -> User {
        guard let user = try await library.user(named: name) else { throw LibraryError.userNotFound(name) }
        return user
    }

    /// The IDs `--libraries` names (nil: all, or not given); an unknown name is a typed error.
    private static func libraryIDs(_ names: [String]??, _ library: Library) async throws -> [Int]? {
        guard let names, let names else { return nil }
        var ids: [Int] = []
        for name in names { ids.append(try await library.musicLibrary(named: name).id) }
        return ids
    }

    private static func roles(_ user: User) -> String {
        (user.isAdmin ? ", admin" : "") + (user.isOwner ? ", owner" : "")
    }

    private static func date(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    // MARK: Reading the password

    /// The password from stdin (one line, its newline stripped) or the terminal (asked twice).
    private func readPassword(confirm: Bool) throws -> String {
        if passwordFromStdin {
            guard let line = Self.readLine(fd: STDIN_FILENO) else { throw UsageError("--password-stdin: nothing on standard input") }
            return line
        }
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else { throw UsageError("no terminal to ask for the password on; pipe it in with --password-stdin") }
        defer { close(tty) }
        let first = try Self.ask("Password: ", tty: tty)
        if confirm {
            let second = try Self.ask("Again: ", tty: tty)
            guard first == second else { throw CommandFailure(code: "passwordMismatch", message: "the passwords typed do not match") }
        }
        return first
    }

    /// Prompts on the terminal and reads one line with echo off, restoring the terminal however
    /// the read ends.
    private static func ask(_ prompt: String, tty: Int32) throws -> String {
        write(tty, prompt, prompt.utf8.count)
        var saved = termios()
        let isTerminal = tcgetattr(tty, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(tty, TCSAFLUSH, &quiet)
        }
        defer { if isTerminal { tcsetattr(tty, TCSAFLUSH, &saved) } }
        guard let line = readLine(fd: tty) else { throw CommandFailure(code: "cancelled", message: "no password was typed") }
        return line
    }

    /// One line from `fd`, without its newline; nil at end of input before any byte. Read a byte
    /// at a time so that nothing after the line is consumed.
    private static func readLine(fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        var sawAny = false
        while true {
            let n = read(fd, &byte, 1)
            if n < 0, errno == EINTR { continue }
            guard n == 1 else { break }
            sawAny = true
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return sawAny ? String(decoding: bytes, as: UTF8.self) : nil
    }
}

extension UserCommand {
    static let discussion = """
        The users of `shelf serve`. The first user added is the library's owner and an admin; the last admin \
        cannot be deleted. A password is asked twice on the terminal without echo, or read as one line from \
        stdin with --password-stdin. key creates an API key, shown only this once; --revoke removes one. \
        --libraries limits what a user sees to those libraries (`shelf library list` names them); all, the \
        default, is every library. Admins see every library whatever their list says. link checks a \
        ListenBrainz token (or a Last.fm name and password, through auth.getMobileSession; only the session key \
        is kept) with the service and stores it encrypted; from then on `shelf serve` scrobbles that user's \
        listens. show says each service's state: linked, or paused with the service's reason, and how many \
        listens are queued. unlink drops the credential and the queue.
        """
    static let flags = [
        FlagHelp("--admin", nil, "With add: the user may manage users and the library."),
        FlagHelp("--libraries", "all|A,B", "With add or update: the libraries the user sees, by name, separated by commas.", default: "all"),
        FlagHelp("--password-stdin", nil, "With add or passwd: read the password as one line from stdin instead of the terminal."),
        FlagHelp("--revoke", "KEY_ID", "With key: revoke that key (its ID from `shelf user list`) instead of creating one."),
        FlagHelp("--token-stdin", nil, "With link NAME listenbrainz: read the user token as one line from stdin."),
        FlagHelp("--username", "U", "With link NAME lastfm: the Last.fm account (its password is read with --password-stdin)."),
        FlagHelp(
            "--url", "URL", "With link: this link's own service address (a ListenBrainz-compatible server such as Maloja).",
            default: "listenbrainz-url, lastfm-url"),
    ]
    static let examples = [
        "shelf user add ann --admin",
        "printf '%s\\n' \"$PASSWORD\" | shelf user passwd ann --password-stdin",
        "shelf user key ann --json",
        "shelf user update kid --libraries Children,Audiobooks",
        "shelf user link ann listenbrainz --token-stdin < lb-token",
        "printf '%s\\n' \"$LASTFM_PASSWORD\" | shelf user link ann lastfm --username ann_fm --password-stdin",
        "shelf user show ann --json",
    ]
    static var words: ValueKind { .choices(["add", "list", "show", "update", "passwd", "delete", "key", "link", "unlink"]) }
}
