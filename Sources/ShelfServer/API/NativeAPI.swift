import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// The native JSON API under `/api/`: the command line's documents (ShelfWire) over HTTP, plus
/// sessions, per-user data, artwork, streaming and events. Handlers only call the engine's public
/// API; every write goes through a write batch.
struct NativeAPI: Sendable {
    let context: ServerContext

    var library: Library { context.library }

    /// Every route of the native API.
    var routes: [Route] {
        let list = ["sort", "sortTags", "filter"]
        return [
            Route("POST", "/api/session", access: .anyone, bodyLimit: 16 * 1024, signIn),
            Route("DELETE", "/api/session", access: .anyone, signOut),
            Route("GET", "/api/me") { request in try .json(UserDocument(user: try request.signedIn)) },
            Route("GET", "/api/info") { _ in try .json(try await library.info()) },
            Route("GET", "/api/mirror") { _ in try .json(try await library.mirrorStatus()) },
            Route("GET", "/api/tracks", query: list + ["after", "offset", "limit", "album"], tracks),
            Route("GET", "/api/sections", query: list) { request in
                try .json(SectionsDocument(sections: try await library.sections(try Self.query(request))))
            },
            Route("GET", "/api/anchor", query: list + ["section"], anchor),
            Route("GET", "/api/snapshot", query: list) { request in
                try .json(SnapshotDocument(ids: try await library.snapshot(try Self.query(request))))
            },
            Route("GET", "/api/tracks/{id}") { request in
                let id = TrackID(try request.id("id", what: "track"))
                guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
                return try .json(track)
            },
            Route("DELETE", "/api/tracks/{id}", access: .admin) { request in
                try await deleteTracks([TrackID(try request.id("id", what: "track"))])
            },
            Route("POST", "/api/tracks/delete", access: .admin) { request in
                try await deleteTracks(try request.json(IDsBody.self).ids.map { TrackID($0) })
            },
            // A new picture rides in the body as base64: up to 16 MiB of image, a third more encoded.
            Route("POST", "/api/edit", access: .admin, bodyLimit: 24 << 20, edit),
            Route("GET", "/api/search", query: ["q", "filter", "playlist", "after", "limit"], search),
            Route("GET", "/api/albums", query: ["sort", "sortTags", "artist", "after", "limit"]) { try await groups(.album, $0) },
            Route("GET", "/api/albums/{id}/tracks") { request in
                let items = try await library.albumTracks(GroupID(try request.id("id", what: "album")))
                return try .json(try await Documents.tracks(ListPage(items: items, nextCursor: nil, total: items.count), library))
            },
            Route("GET", "/api/artists", query: ["sort", "sortTags", "by", "after", "limit"]) { try await groups(.artist, $0) },
            Route("GET", "/api/artists/{id}/albums", query: ["sort", "sortTags", "after", "limit"]) { request in
                let query = try Parameters.groupQuery(
                    kind: .album, by: nil, sort: request.query("sort"), sortTags: request.query("sortTags"),
                    artist: String(try request.id("id", what: "artist")))
                let limit = try request.int("limit", in: 0...10_000) ?? 50
                let after = try request.query("after").map { text throws(WireInputError) in try Parameters.cursor(text) }
                return try .json(Documents.groups(try await library.groups(query, after: after, limit: limit)))
            },
            Route("GET", "/api/composers", query: ["sort", "sortTags", "after", "limit"]) { try await groups(.composer, $0) },
            Route("GET", "/api/albums/sections", query: ["sort", "sortTags", "artist"]) { try await groupSections(.album, $0) },
            Route("GET", "/api/artists/sections", query: ["sort", "sortTags", "by"]) { try await groupSections(.artist, $0) },
            Route("GET", "/api/composers/sections", query: ["sort", "sortTags"]) { try await groupSections(.composer, $0) },
            Route("GET", "/api/genres/sections", query: ["sort", "sortTags"]) { try await groupSections(.genre, $0) },
            Route("GET", "/api/genres", query: ["sort", "sortTags", "after", "limit"]) { try await groups(.genre, $0) },
            Route("GET", "/api/playlists", playlists),
            Route("POST", "/api/playlists", createPlaylist),
            Route("GET", "/api/playlists/{id}") { request in
                let id = try await visiblePlaylist(request)
                return try .json(try await Documents.playlist(id, library))
            },
            Route("GET", "/api/playlists/{id}/page", query: list + ["after", "limit"]) { request in
                let id = try await visiblePlaylist(request)
                let query = try Self.query(request)
                let limit = try request.int("limit", in: 0...10_000) ?? 50
                let after = try request.query("after").map { text throws(WireInputError) in try Parameters.cursor(text) }
                let page = try await library.playlistList(id, sortedBy: query, filter: query.filter, after: after, limit: limit)
                return try .json(try await Documents.tracks(page, library))
            },
            Route("POST", "/api/playlists/{id}/items") { request in
                let id = try await ownedPlaylist(request)
                let body = try request.json(AddBody.self)
                let tracks = body.tracks.map { TrackID($0) }
                try await checkPositions(body.at.map { [$0] } ?? [], in: id, allowEnd: true)
                try await context.write { batch in
                    if let at = body.at { try batch.insertIntoPlaylist(id, tracks, at: at - 1) } else { try batch.appendToPlaylist(id, tracks) }
                }
                return try .json(try await Documents.playlistCount(id, library))
            },
            Route("POST", "/api/playlists/{id}/move") { request in
                let id = try await ownedPlaylist(request)
                let body = try request.json(MoveBody.self)
                try await checkPositions(body.positions, in: id)
                try await checkPositions([body.to], in: id, allowEnd: true)
                try await context.write { batch in try batch.movePlaylistItems(id, from: body.positions.map { $0 - 1 }, to: body.to - 1) }
                return try .json(try await Documents.playlistCount(id, library))
            },
            Route("POST", "/api/playlists/{id}/remove") { request in
                let id = try await ownedPlaylist(request)
                let body = try request.json(PositionsBody.self)
                try await checkPositions(body.positions, in: id)
                try await context.write { batch in try batch.removeFromPlaylist(id, at: body.positions.map { $0 - 1 }) }
                return try .json(try await Documents.playlistCount(id, library))
            },
            Route("POST", "/api/playlists/{id}/rename", bodyLimit: 16 * 1024) { request in
                let id = try await ownedPlaylist(request)
                let name = try request.json(RenameBody.self).name.trimmingCharacters(in: .whitespacesAndNewlines)
                guard !name.isEmpty, name.count <= 500 else { throw HTTPError.badRequest("name must be 1 to 500 characters", code: "invalidValue") }
                try await context.write { batch in
                    guard var playlist = try batch.playlist(id) else { throw LibraryError.playlistNotFound(id) }
                    playlist.name = name
                    try batch.updatePlaylist(playlist)
                }
                return try .json(RenamedDocument(id: id, name: name))
            },
            Route("DELETE", "/api/playlists/{id}") { request in
                let id = try await ownedPlaylist(request)
                try await context.write { batch in try batch.deletePlaylist(id) }
                return try .json(["deleted": id])
            },
            Route("POST", "/api/smart", createSmart),
            Route("GET", "/api/smart/{id}", query: ["limit"]) { request in
                let id = try await visiblePlaylist(request)
                return try .json(try await Documents.smartPlaylist(id, limit: try request.int("limit", in: 0...100_000) ?? 50, library))
            },
            Route("PUT", "/api/tracks/{id}/star") { try await star($0, true) },
            Route("DELETE", "/api/tracks/{id}/star") { try await star($0, false) },
            Route("PUT", "/api/tracks/{id}/rating", bodyLimit: 4096) { request in
                let user = try request.signedIn
                let id = TrackID(try request.id("id", what: "track"))
                let rating = try request.json(RatingBody.self).rating
                if let rating, !(0...100).contains(rating) {
                    throw HTTPError.badRequest("rating expects 0 to 100 (or null to clear), got \(rating)", code: "invalidValue")
                }
                try await context.write { batch in try batch.setRating(id, by: user.id, rating) }
                return try await userData(user, [id])
            },
            Route("POST", "/api/tracks/{id}/scrobble", query: ["time"]) { request in
                let user = try request.signedIn
                let id = TrackID(try request.id("id", what: "track"))
                let at = try request.int("time", in: 0...Int(Int32.max)).map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? Date()
                try await context.write { batch in try batch.recordPlay(id, by: user.id, at: at) }
                return try await userData(user, [id])
            },
            Route("GET", "/api/me/tracks", query: ["ids"]) { request in
                let ids = try (request.query("ids") ?? "").split(separator: ",").map { piece throws(HTTPError) in
                    guard let id = Int64(piece), id > 0 else { throw HTTPError.badRequest("ids expects track IDs separated by commas", code: "invalidValue") }
                    return TrackID(id)
                }
                return try await userData(try request.signedIn, ids)
            },
            Route("GET", "/api/me/starred", query: ["limit", "offset"]) { request in
                let ids = try await library.starredTracks(of: try request.signedIn.id)
                let offset = try request.int("offset", in: 0...Int(Int32.max)) ?? 0
                let limit = try request.int("limit", in: 0...10_000) ?? 50
                let shown = Array(ids.dropFirst(offset).prefix(limit))
                let byID = Dictionary(try await library.tracks(ids: shown).tracks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                let items = shown.compactMap { byID[$0].map { TrackListItem($0, section: "#") } }
                let next = offset + shown.count < ids.count ? "\(offset + shown.count)" : nil
                let page = try await Documents.tracks(ListPage(items: items, nextCursor: nil, total: ids.count), library)
                return try .json(PageResult(items: page.items, nextCursor: next, total: ids.count))
            },
            Route("GET", "/api/token") { _ in try .json(TokenDocument(token: try await library.currentToken())) },
            Route("GET", "/api/changes", query: ["since", "summary", "playlist", "limit"], changes),
            Route("GET", "/api/events", query: ["since"], events),
            Route("GET", "/api/artwork/{artworkID}", query: ["size", "format"]) { request in
                guard let uuid = UUID(uuidString: request.parameters["artworkID"] ?? "") else {
                    throw HTTPError.badRequest("'\(request.parameters["artworkID"] ?? "")' is not an artwork ID", code: "invalidValue")
                }
                return try await context.artwork.respond(
                    ArtworkID(uuid), size: try request.int("size", in: 1...100_000) ?? 300, format: try Self.imageFormat(request),
                    ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "public, max-age=31536000, immutable")
            },
            Route("GET", "/api/tracks/{id}/artwork", query: ["size", "format"]) { request in
                let id = TrackID(try request.id("id", what: "track"))
                guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
                guard let artworkID = track.artworkID else { throw HTTPError.notFound("track \(id) has no picture") }
                return try await context.artwork.respond(
                    artworkID, size: try request.int("size", in: 1...100_000) ?? 300, format: try Self.imageFormat(request),
                    ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "private, max-age=60")
            },
            Route("GET", "/api/stream/{id}", query: ["format", "bitRate", "timeOffset"], stream),
            Route("POST", "/api/import", access: .admin, startImport),
            Route("GET", "/api/import", access: .admin) { _ in try .json(context.imports.status) },
            Route("POST", "/api/export", access: .admin, export),
        ]
    }

    // MARK: Sessions

    struct SignInBody: Decodable {
        let name: String
        let password: String
    }

    /// `{"user":{…}}`.
    struct UserDocument: Encodable {
        let user: User
    }

    func signIn(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(SignInBody.self)
        try context.throttle.check(request.http.remoteAddress)
        guard let user = try await library.authenticate(name: body.name, password: body.password) else {
            context.throttle.fail(request.http.remoteAddress)
            throw HTTPError.unauthorized("wrong name or password")
        }
        let token = try await library.createSession(user: user.id)
        return try .json(
            UserDocument(user: user),
            headers: [("Set-Cookie", SessionAuthenticator.cookie(token, secure: request.http.isTLS))])
    }

    func signOut(_ request: RouteRequest) async throws -> HTTPResponse {
        if let token = request.http.cookie(SessionAuthenticator.cookieName) { try await library.deleteSession(token) }
        return try .json(["signedOut": true], headers: [("Set-Cookie", SessionAuthenticator.cookie("", secure: request.http.isTLS, maxAge: 0))])
    }

    // MARK: Lists

    static func query(_ request: RouteRequest) throws -> LibraryQuery {
        try Parameters.query(
            sort: request.query("sort") ?? "artist", sortTags: request.query("sortTags"),
            filter: try Parameters.filter(request.query("filter") ?? ""))
    }

    func tracks(_ request: RouteRequest) async throws -> HTTPResponse {
        if let album = request.query("album") {
            let items = try await library.albumTracks(GroupID(try Parameters.id(album, what: "album")))
            return try .json(try await Documents.tracks(ListPage(items: items, nextCursor: nil, total: items.count), library))
        }
        let query = try Self.query(request)
        let limit = try request.int("limit", in: 0...10_000) ?? 50
        let offset = try request.int("offset", in: 0...Int(Int32.max))
        let after = try request.query("after").map { text throws(WireInputError) in try Parameters.cursor(text) }
        if offset != nil && after != nil { throw HTTPError.badRequest("after and offset cannot be combined", code: "invalidValue") }
        let page = if let offset {
            try await library.list(query, offset: offset, limit: limit)
        } else {
            try await library.list(query, after: after, limit: limit)
        }
        return try .json(try await Documents.tracks(page, library))
    }

    /// `{"section":"M","index":N,"cursor":"…"}`, or 404 when the section has no rows.
    struct AnchorDocument: Encodable {
        let section: String
        let index: Int
        let cursor: String
    }

    func anchor(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let section = request.query("section"), !section.isEmpty else {
            throw HTTPError.badRequest("anchor needs section (A–Z, a kana row such as あ, or #)", code: "missingParameter")
        }
        guard let anchor = try await library.anchor(section, try Self.query(request)) else {
            throw HTTPError.notFound("the list has no rows in section '\(section)'")
        }
        return try .json(AnchorDocument(section: section, index: anchor.index, cursor: anchor.cursor.description))
    }

    func search(_ request: RouteRequest) async throws -> HTTPResponse {
        let text = request.query("q") ?? ""
        guard !SearchQuery(text).isEmpty else { throw HTTPError.badRequest("search needs q, the words to search for", code: "missingParameter") }
        let playlist = try request.query("playlist").map { text throws(WireInputError) in PlaylistID(try Parameters.id(text, what: "playlist")) }
        let scope = SearchScope(filter: try Parameters.filter(request.query("filter") ?? ""), playlist: playlist)
        let after = try request.query("after").map { text throws(WireInputError) in try Parameters.cursor(text) }
        let page = try await library.search(text, scope: scope, after: after, limit: try request.int("limit", in: 0...10_000) ?? 50)
        return try .json(try await Documents.tracks(page, library))
    }

    func groups(_ kind: GroupKind, _ request: RouteRequest) async throws -> HTTPResponse {
        let query = try Parameters.groupQuery(
            kind: kind, by: request.query("by"), sort: request.query("sort"), sortTags: request.query("sortTags"), artist: request.query("artist"))
        let after = try request.query("after").map { text throws(WireInputError) in try Parameters.cursor(text) }
        return try .json(Documents.groups(try await library.groups(query, after: after, limit: try request.int("limit", in: 0...10_000) ?? 50)))
    }

    /// `{"sections":[…]}` of a view, as `/api/sections` is of the tracks: the web page's jump bar over the grids.
    func groupSections(_ kind: GroupKind, _ request: RouteRequest) async throws -> HTTPResponse {
        let query = try Parameters.groupQuery(
            kind: kind, by: request.query("by"), sort: request.query("sort"), sortTags: request.query("sortTags"), artist: request.query("artist"))
        return try .json(SectionsDocument(sections: try await library.groupSections(query)))
    }

    // MARK: Writes

    struct IDsBody: Decodable { let ids: [Int64] }

    func deleteTracks(_ ids: [TrackID]) async throws -> HTTPResponse {
        var seen = Set<TrackID>()
        let unique = ids.filter { seen.insert($0).inserted }
        guard !unique.isEmpty else { throw HTTPError.badRequest("delete needs at least one track ID", code: "invalidValue") }
        try await context.write { batch in for id in unique { try batch.deleteTrack(id) } }
        return try .json(DeletedTracksDocument(deleted: unique))
    }

    /// `{"ids":[1,2],"set":{"genre":"Jazz","year":"1999","comment":null}}`: null or "" clears a field.
    struct EditBody: Decodable {
        let ids: [Int64]
        let set: [String: String?]?
        /// A new picture, JPEG or PNG bytes in base64, for every track of the edit.
        let picture: String?
        /// Removes the picture instead.
        let removePicture: Bool?
    }

    func edit(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(EditBody.self)
        var values: [EditableField: String?] = [:]
        for (name, value) in body.set ?? [:] {
            guard let field = EditableField(rawValue: name) else {
                throw HTTPError.badRequest(
                    "set: unknown field '\(name)'; one of \(EditableField.allCases.map(\.rawValue).joined(separator: ", "))", code: "invalidValue")
            }
            values[field] = (value?.isEmpty ?? true) ? String?.none : value
        }
        var picture = PictureChange.unchanged
        switch (body.picture, body.removePicture ?? false) {
        case (let encoded?, false):
            guard let data = Data(base64Encoded: encoded), !data.isEmpty else {
                throw HTTPError.badRequest("picture: not base64 of an image's bytes", code: "invalidValue")
            }
            picture = .set(data)
        case (nil, true): picture = .remove
        case (nil, false): break
        case (_?, true): throw HTTPError.badRequest("picture and removePicture cannot be combined", code: "invalidValue")
        }
        let changes = MetadataChanges(values, picture: picture)
        if let problem = changes.problem() { throw HTTPError.badRequest("set: \(problem)", code: "invalidValue") }
        guard !body.ids.isEmpty, !values.isEmpty || picture != .unchanged else {
            throw HTTPError.badRequest("edit needs ids, and set, picture or removePicture", code: "invalidValue")
        }
        let result = try await library.edit(body.ids.map { TrackID($0) }, changes)
        context.events.poke()
        return try .json(EditDocument(result))
    }

    // MARK: Playlists

    struct CreatePlaylistBody: Decodable {
        let name: String
        let folder: Bool?
        let parent: Int64?
        let `public`: Bool?
    }

    struct AddBody: Decodable {
        let tracks: [Int64]
        let at: Int?
    }

    struct MoveBody: Decodable {
        let positions: [Int]
        let to: Int
    }

    struct PositionsBody: Decodable { let positions: [Int] }

    struct RenameBody: Decodable { let name: String }

    /// `{"id":…,"name":…}`: a playlist after a rename.
    struct RenamedDocument: Encodable {
        let id: PlaylistID
        let name: String
    }

    struct RatingBody: Decodable { let rating: Int? }

    func playlists(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try request.signedIn
        let visible = Set(try await library.visiblePlaylists(for: user).map(\.playlist.id))
        let all = try await Documents.playlists(library)
        return try .json(PlaylistsDocument(playlists: all.playlists.filter { visible.contains($0.id) }))
    }

    func visiblePlaylist(_ request: RouteRequest) async throws -> PlaylistID {
        let id = PlaylistID(try request.id("id", what: "playlist"))
        guard try await library.visiblePlaylist(id, for: try request.signedIn) != nil else { throw LibraryError.playlistNotFound(id) }
        return id
    }

    func ownedPlaylist(_ request: RouteRequest) async throws -> PlaylistID {
        let id = try await visiblePlaylist(request)
        let user = try request.signedIn
        guard try await library.visiblePlaylist(id, for: user)?.canChange == true else {
            throw HTTPError.forbidden("playlist \(id) belongs to someone else; \(user.name) may read it but not change it")
        }
        return id
    }

    /// Positions count from 1, as on the command line.
    func checkPositions(_ positions: [Int], in id: PlaylistID, allowEnd: Bool = false) async throws {
        let count = try await library.playlistItems(id).count
        for position in positions where position < 1 || position > count + 1 || (position == count + 1 && !allowEnd) {
            throw HTTPError.badRequest("position \(position): playlist \(id) has \(count) item\(count == 1 ? "" : "s")", code: "invalidValue")
        }
    }

    func createPlaylist(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try request.signedIn
        let body = try request.json(CreatePlaylistBody.self)
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 500 else { throw HTTPError.badRequest("name must be 1 to 500 characters", code: "invalidValue") }
        let parent = body.parent.map { PlaylistID($0) }
        let id = try await context.write { batch in
            let id = try batch.createPlaylist(Playlist(name: name, parentID: parent, kind: body.folder == true ? .folder : .regular))
            try batch.setPlaylistOwner(id, user.id, public: body.public ?? false)
            return id
        }
        return try .json(["id": id], status: 201)
    }

    struct SmartBody: Decodable {
        let name: String
        let rule: String
        let limit: String?
        let by: String?
        let parent: Int64?
    }

    func createSmart(_ request: RouteRequest) async throws -> HTTPResponse {
        let user = try request.signedIn
        let body = try request.json(SmartBody.self)
        let condition: SmartCondition
        do { condition = try SmartRules.parseCondition(body.rule) } catch { throw HTTPError.badRequest("rule: \(error)", code: "invalidValue") }
        let selection = try body.by.map { text throws(HTTPError) in
            guard let value = SmartSelection(rawValue: text) else {
                throw HTTPError.badRequest("by expects one of \(SmartSelection.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'", code: "invalidValue")
            }
            return value
        }
        let limit = try body.limit.map { text throws(WireInputError) in try Parameters.smartLimit(text) }
        if limit != nil && selection == nil { throw HTTPError.badRequest("limit needs by (which tracks to keep)", code: "invalidValue") }
        let rules = SmartRules(condition, limit: limit, selection: selection)
        let id = try await library.createSmartPlaylist(name: body.name, rules: rules, parent: body.parent.map { PlaylistID($0) })
        try await context.write { batch in try batch.setPlaylistOwner(id, user.id, public: false) }
        return try .json(SmartCreatedDocument(id: id, name: body.name, rules: rules), status: 201)
    }

    // MARK: Per-user data

    /// `{"tracks":{"7":{"starred":…,"rating":…,"playCount":…,"lastPlayed":…}}}`.
    struct UserTracksDocument: Encodable {
        let tracks: [String: UserTrackData]
    }

    func userData(_ user: User, _ ids: [TrackID]) async throws -> HTTPResponse {
        let data = try await library.userTrackData(for: user.id, tracks: ids)
        var tracks: [String: UserTrackData] = [:]
        for id in ids { tracks[id.description] = data[id] ?? UserTrackData() }
        return try .json(UserTracksDocument(tracks: tracks))
    }

    func star(_ request: RouteRequest, _ starred: Bool) async throws -> HTTPResponse {
        let user = try request.signedIn
        let id = TrackID(try request.id("id", what: "track"))
        try await context.write { batch in try batch.setStarred([id], by: user.id, starred) }
        return try await userData(user, [id])
    }

    // MARK: History

    func changes(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let since = request.query("since") else { throw HTTPError.badRequest("changes needs since, a token from /api/token", code: "missingParameter") }
        let scope = try request.http.queryValues("playlist").map { text throws(WireInputError) in PlaylistID(try Parameters.id(text, what: "playlist")) }
        let summary = try request.bool("summary") ?? false
        let limit = try request.int("limit", in: 1...1_000_000)
        if summary && limit != nil { throw HTTPError.badRequest("summary and limit cannot be combined", code: "invalidValue") }
        return try .json(
            try await Documents.changes(
                since: try Library.token(since), summary: summary, scope: scope.isEmpty ? nil : Set(scope), limit: limit, library))
    }

    func events(_ request: RouteRequest) async throws -> HTTPResponse {
        let resume = request.http.headers["last-event-id"] ?? request.query("since")
        let since = try resume.map { try Library.token($0) }
        let stream = try await context.events.subscribe(since: since)
        return HTTPResponse(
            status: 200,
            headers: [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")],
            body: .stream(stream))
    }

    // MARK: Media

    static func imageFormat(_ request: RouteRequest) throws(HTTPError) -> ArtworkResponder.Format {
        guard let text = request.query("format") else { return .jpeg }
        guard let format = ArtworkResponder.Format(rawValue: text) else {
            throw HTTPError.badRequest("format expects jpeg or png, got '\(text)'", code: "invalidValue")
        }
        return format
    }

    func stream(_ request: RouteRequest) async throws -> HTTPResponse {
        let id = TrackID(try request.id("id", what: "track"))
        guard let formatText = request.query("format"), formatText != "raw" else {
            if request.query("bitRate") != nil || request.query("timeOffset") != nil {
                throw HTTPError.badRequest("bitRate and timeOffset need format (opus, mp3, aac or flac)", code: "invalidValue")
            }
            return try await context.streams.file(id, request: request.http)
        }
        // A preset of the config file (`format=mobile`) names a format and its bit rate.
        let preset = context.streams.presets[formatText]
        guard let format = preset?.format ?? StreamResponder.TranscodeFormat(rawValue: formatText) else {
            let names = (["raw"] + StreamResponder.TranscodeFormat.allCases.map(\.rawValue) + context.streams.presets.keys.sorted()).joined(separator: ", ")
            throw HTTPError.badRequest("format expects one of \(names), got '\(formatText)'", code: "invalidValue")
        }
        let bitRate = try request.int("bitRate", in: 32...320) ?? preset?.bitRate ?? 128
        let offset: Double
        if let text = request.query("timeOffset") {
            guard let value = Double(text), value >= 0, value < 86_400 else {
                throw HTTPError.badRequest("timeOffset expects seconds from 0, got '\(text)'", code: "invalidValue")
            }
            offset = value
        } else {
            offset = 0
        }
        return try await context.streams.transcode(id, format: format, bitRate: bitRate, timeOffset: offset)
    }

    // MARK: Whole-library jobs

    struct ImportBody: Decodable { let paths: [String] }

    func startImport(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(ImportBody.self)
        guard !body.paths.isEmpty else { throw HTTPError.badRequest("import needs paths", code: "invalidValue") }
        for path in body.paths where !path.hasPrefix("/") || !FileManager.default.fileExists(atPath: path) {
            throw HTTPError.badRequest("'\(path)' is not an absolute path that exists on the server", code: "invalidValue")
        }
        let status = try context.imports.start(body.paths.map { URL(fileURLWithPath: $0) })
        return try .json(status, status: 202)
    }

    struct ExportBody: Decodable {
        let ids: [Int64]?
        let filter: String?
        let to: String
        let format: String?
        let bitrate: Int?
    }

    func export(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(ExportBody.self)
        guard (body.ids?.isEmpty ?? true) != (body.filter == nil) else {
            throw HTTPError.badRequest("export needs ids or filter (one of them)", code: "invalidValue")
        }
        guard body.to.hasPrefix("/") else { throw HTTPError.badRequest("to must be an absolute directory on the server", code: "invalidValue") }
        guard let format = ExportFormat(rawValue: body.format ?? "copy") else {
            throw HTTPError.badRequest("format expects \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", "))", code: "invalidValue")
        }
        var ids = (body.ids ?? []).map { TrackID($0) }
        if let filter = body.filter { ids = try await library.snapshot(LibraryQuery(sort: .albumArtist, filter: try Parameters.filter(filter))) }
        let result = try await library.export(ids, to: URL(fileURLWithPath: body.to), options: ExportOptions(format: format, bitrate: body.bitrate))
        context.events.poke()
        return try .json(ExportDocument(result))
    }
}
