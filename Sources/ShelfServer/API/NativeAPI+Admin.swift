import CMemory
import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// What the web page's admin and settings views need beyond the Subsonic API (which the page
/// calls with its session for users, shares, podcasts and the rest): API keys, the user's other
/// sessions, the loudness measurement, and the backups.
extension NativeAPI {
    /// The routes of this group.
    var adminRoutes: [Route] {
        [
            Route("GET", "/api/users/{name}/keys", listKeys),
            Route("POST", "/api/users/{name}/keys", createKey),
            Route("DELETE", "/api/keys/{id}", revokeKey),
            Route("GET", "/api/me/sessions", sessions),
            Route("DELETE", "/api/me/sessions/others", endOtherSessions),
            Route("GET", "/api/loudness", access: .admin, loudnessStatus),
            Route("POST", "/api/loudness", access: .admin) { _ in
                context.loudness.runNow()
                return try .json(try await loudnessDocument(), status: 202)
            },
            Route("GET", "/api/backups", access: .admin, listBackups),
            Route("POST", "/api/backups", access: .admin, takeBackup),
            Route("GET", "/api/memory", access: .admin) { _ in try .json(Self.memory(context)) },
        ]
    }

    /// `GET /api/memory`: where a long-running server's memory is, so that growth can be told apart
    /// as a cache filling to its cap or something else. Bytes, but for `subsonicListIDs`.
    struct MemoryDocument: Encodable {
        /// The process's resident set (`VmRSS`), and its private part, heap and caches (`RssAnon`).
        let resident: Int
        let residentPrivate: Int
        /// What malloc has handed out, and what it keeps free inside its arenas.
        let heapInUse: Int
        let heapFree: Int
        /// SQLite's caches, statements and schemas, every connection together, and the cap on them.
        let databaseCache: Int64
        let databaseCacheLimit: Int64
        /// The encoded pictures kept for `/api/artwork` and getCoverArt.
        let artworkCache: Int
        /// The album IDs the remembered Subsonic list positions hold (their budget is 200,000).
        let subsonicListIDs: Int
    }

    /// The figures now; each is cheap to read (mallinfo2 walks malloc's free lists, fine per request).
    static func memory(_ context: ServerContext) -> MemoryDocument {
        // /proc/self/status lines are "VmRSS:\t  123456 kB".
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func kilobytes(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return (line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) } ?? 0) * 1024
        }
        let database = Library.databaseMemory
        return MemoryDocument(
            resident: kilobytes("VmRSS"), residentPrivate: kilobytes("RssAnon"), heapInUse: shelf_memory_in_use(), heapFree: shelf_memory_free(),
            databaseCache: database.inUse, databaseCacheLimit: database.limit, artworkCache: context.artwork.cachedBytes,
            subsonicListIDs: context.subsonicCursors.seenCount)
    }

    /// `{"keys":[{id,created,lastUsed}]}`: the key IDs, never the keys.
    struct KeysDocument: Encodable {
        struct Key: Encodable {
            let id: String
            let created: Date
            let lastUsed: Date?
        }
        let keys: [Key]
    }

    /// `{"key":"…","info":{id,created,lastUsed}}`: the key itself, this once.
    struct NewKeyDocument: Encodable {
        let key: String
        let info: KeysDocument.Key
    }

    /// The user a key route names: oneself, or anyone for an admin.
    func keyOwner(_ request: RouteRequest) async throws -> User {
        let me = try request.signedIn
        let name = request.parameters["name"] ?? ""
        guard let user = try await library.user(named: name) else { throw HTTPError.notFound("there is no user '\(name)'") }
        guard user.id == me.id || me.isAdmin else { throw HTTPError.forbidden("only an admin may manage another user's API keys") }
        return user
    }

    func listKeys(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try await keyOwner(request)
        let keys = try await library.apiKeys(of: user.id).map { KeysDocument.Key(id: $0.id, created: $0.created, lastUsed: $0.lastUsed) }
        return try .json(KeysDocument(keys: keys))
    }

    func createKey(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try await keyOwner(request)
        let (info, key) = try await library.createAPIKey(for: user.id)
        context.events.poke()
        return try .json(NewKeyDocument(key: key, info: .init(id: info.id, created: info.created, lastUsed: info.lastUsed)), status: 201)
    }

    func revokeKey(_ request: RouteRequest) async throws -> HTTPResponse {
        let me = try request.signedIn
        let id = request.parameters["id"] ?? ""
        // The owner is found among the keys the caller may see, so an unknown ID and another
        // user's key answer alike to a non-admin.
        let owners = me.isAdmin ? try await library.users() : [me]
        var found = false
        for owner in owners where try await library.apiKeys(of: owner.id).contains(where: { $0.id == id }) {
            found = true
            break
        }
        guard found else { throw HTTPError.notFound("there is no API key '\(id)'") }
        try await library.revokeAPIKey(id: id)
        return try .json(["revoked": id])
    }

    func sessions(_ request: RouteRequest) async throws -> HTTPResponse {
        let me = try request.signedIn
        return try .json(["sessions": try await library.sessionCount(of: me.id)])
    }

    func endOtherSessions(_ request: RouteRequest) async throws -> HTTPResponse {
        let me = try request.signedIn
        let ended = try await library.deleteSessions(of: me.id, except: request.http.cookie(SessionAuthenticator.cookieName))
        return try .json(["ended": ended])
    }

    /// `{"enabled","running","last","withoutGain"}`.
    struct LoudnessDocument: Encodable {
        let enabled: Bool
        let running: Bool
        /// Null before the first run.
        @NullWhenNil var last: LoudnessJob.LastRun?
        /// Tracks without a ReplayGain gain: what a run would measure.
        let withoutGain: Int
    }

    func loudnessDocument() async throws -> LoudnessDocument {
        let status = context.loudness.status
        let waiting = try await library.page(LibraryQuery(filter: try Parameters.filter("replayGain:no")), limit: 0).total
        return LoudnessDocument(enabled: status.enabled, running: status.running, last: status.last, withoutGain: waiting)
    }

    func loudnessStatus(_ request: RouteRequest) async throws -> HTTPResponse {
        try .json(try await loudnessDocument())
    }

    /// `{"directory","keep","every","lastRun","lastError","running","backups":[…]}`: the files'
    /// facts only; a backup holds the secret key, so none is ever sent over HTTP.
    struct BackupsDocument: Encodable {
        // The missing ones as null: the page tells "not configured" from "no run yet".
        @NullWhenNil var directory: String?
        let keep: Int
        /// Seconds between scheduled backups.
        let every: Int
        @NullWhenNil var lastRun: Date?
        @NullWhenNil var lastError: String?
        let running: Bool
        let backups: [BackupFileInfo]
    }

    func listBackups(_ request: RouteRequest) async throws -> HTTPResponse {
        let status = context.backups.status
        return try .json(
            BackupsDocument(
                directory: status.directory, keep: status.keep, every: status.every, lastRun: status.lastRun, lastError: status.lastError,
                running: status.running, backups: try await context.backups.backups()))
    }

    /// Takes a backup into `backup-dir` now and answers its `BackupReport` once it is written
    /// (and the oldest beyond `backup-keep` deleted); 409 with no folder or while one runs.
    func takeBackup(_ request: RouteRequest) async throws -> HTTPResponse {
        let me = try request.signedIn
        do {
            return try .json(try await context.backups.backupNow(reason: "asked by \(me.name)"), status: 201)
        } catch let error as LibraryError where error.kind == .internal {
            // The admin who asked is told why, not only the log (a full disk is a 507 on every route).
            throw HTTPError(status: 500, code: error.code, message: error.description)
        }
    }
}
