import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Playlists and smart playlists, under the engine's visibility rules (`Library.visiblePlaylist`).
extension NativeAPI {
    /// The routes of this group.
    var playlistRoutes: [Route] {
        [
            Route("GET", "/api/playlists", playlists),
            Route("POST", "/api/playlists", createPlaylist),
            Route("GET", "/api/playlists/{id}") { request in
                let id = try await visiblePlaylist(request)
                return try .json(try await Documents.playlist(id, library))
            },
            Route("GET", "/api/playlists/{id}/page", query: Self.listQuery + ["after", "limit"]) { request in
                let id = try await visiblePlaylist(request)
                let query = try Self.query(request)
                let limit = try request.limit()
                let after = try request.after()
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
            Route("POST", "/api/playlists/{id}/comment", bodyLimit: 16 * 1024) { request in
                let id = try await ownedPlaylist(request)
                let comment = try request.json(CommentBody.self).comment
                try await context.write { batch in
                    guard var playlist = try batch.playlist(id) else { throw LibraryError.playlistNotFound(id) }
                    playlist.comment = comment
                    try batch.updatePlaylist(playlist)
                }
                return try .json(CommentedDocument(id: id, comment: comment.flatMap { SortKey.isBlank($0) ? nil : $0 }))
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
        ]
    }

    /// `{"comment": "…"}`; null or blank clears it.
    struct CommentBody: Decodable {
        let comment: String?
    }

    /// `{"id":…,"comment":…}` after a comment is set.
    struct CommentedDocument: Encodable {
        let id: PlaylistID
        let comment: String?
    }

    struct CreatePlaylistBody: Decodable {
        let name: String
        let comment: String?
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

    /// The playlist role (`shelf user`, Subsonic's playlistRole) holds on `/api/` too.
    static func requirePlaylistRole(_ user: User) throws(HTTPError) {
        guard user.may(.playlist) else { throw HTTPError.forbidden("\(user.name) may not edit playlists") }
    }

    func ownedPlaylist(_ request: RouteRequest) async throws -> PlaylistID {
        let id = try await visiblePlaylist(request)
        let user = try request.signedIn
        try Self.requirePlaylistRole(user)
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
        try Self.requirePlaylistRole(user)
        let body = try request.json(CreatePlaylistBody.self)
        let name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 500 else { throw HTTPError.badRequest("name must be 1 to 500 characters", code: "invalidValue") }
        let parent = body.parent.map { PlaylistID($0) }
        let id = try await context.write { batch in
            let id = try batch.createPlaylist(
                Playlist(name: name, parentID: parent, kind: body.folder == true ? .folder : .regular, comment: body.comment))
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
        try Self.requirePlaylistRole(user)
        let body = try request.json(SmartBody.self)
        let condition: SmartCondition
        do { condition = try SmartRules.parseCondition(body.rule) } catch { throw HTTPError.badRequest("rule: \(error)", code: "invalidValue") }
        let selection = try body.by.map { text throws(HTTPError) in
            guard let value = SmartSelection(rawValue: text) else {
                throw HTTPError.badRequest(
                    "by expects one of \(SmartSelection.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'", code: "invalidValue")
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
}
