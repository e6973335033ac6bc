import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Tracks and views: the library's lists, sections, anchors, snapshots, search, the album, artist, composer and genre views, and the admin's track writes (delete, edit).
extension NativeAPI {
    /// The routes of this group.
    var trackRoutes: [Route] {
        [
            Route("GET", "/api/info") { _ in try .json(try await library.info()) },
            Route("GET", "/api/mirror") { _ in try .json(try await library.mirrorStatus()) },
            Route("GET", "/api/tracks", query: Self.listQuery + ["after", "offset", "limit", "album"], tracks),
            Route("GET", "/api/sections", query: Self.listQuery) { request in
                try .json(SectionsDocument(sections: try await library.sections(try Self.query(request))))
            },
            Route("GET", "/api/anchor", query: Self.listQuery + ["section"], anchor),
            Route("GET", "/api/snapshot", query: Self.listQuery) { request in
                try .json(SnapshotDocument(ids: try await library.snapshot(try Self.query(request))))
            },
            Route("GET", "/api/tracks/{id}") { request in
                let id = TrackID(try request.id("id", what: "track"))
                guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
                // `shelf track --json`'s document: the track with its sonic features and analysis.
                return try .json(TrackWithSonic(track: track, record: try await library.sonicRecord(of: id)))
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
            Route("GET", "/api/artists/{id}/albums", query: ["sort", "sortTags", "after", "limit", "role"]) { request in
                // role=appears: the albums of others the artist is credited on (all of them, one page).
                switch request.query("role") ?? "owner" {
                case "owner": break
                case "appears":
                    let items = try await library.appearances(of: GroupID(try request.id("id", what: "artist")))
                    return try .json(Documents.groups(GroupPage(items: items, nextCursor: nil, total: items.count)))
                case let other: throw HTTPError.badRequest("role expects owner or appears, got '\(other)'", code: "invalidValue")
                }
                let query = try Parameters.groupQuery(
                    kind: .album, by: nil, sort: request.query("sort"), sortTags: request.query("sortTags"),
                    artist: String(try request.id("id", what: "artist")))
                let limit = try request.limit()
                let after = try request.after()
                return try .json(Documents.groups(try await library.groups(query, after: after, limit: limit)))
            },
            Route("GET", "/api/composers", query: ["sort", "sortTags", "after", "limit"]) { try await groups(.composer, $0) },
            Route("GET", "/api/albums/sections", query: ["sort", "sortTags", "artist"]) { try await groupSections(.album, $0) },
            // The ID the artist views give a name (and its MusicBrainz ID, which tells artists of
            // one name apart), so a page can link each of a track's artists.
            Route("GET", "/api/artists/named", query: ["name", "musicBrainzId"]) { request in
                guard let name = request.query("name"), !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw HTTPError.badRequest("name is required", code: "invalidValue")
                }
                let id = Library.artistID(named: name, musicBrainzID: request.query("musicBrainzId"))
                return try .json(ArtistNameDocument(id: id.rawValue, name: name))
            },
            Route("GET", "/api/artists/sections", query: ["sort", "sortTags", "by"]) { try await groupSections(.artist, $0) },
            Route("GET", "/api/composers/sections", query: ["sort", "sortTags"]) { try await groupSections(.composer, $0) },
            Route("GET", "/api/genres/sections", query: ["sort", "sortTags"]) { try await groupSections(.genre, $0) },
            Route("GET", "/api/genres", query: ["sort", "sortTags", "after", "limit"]) { try await groups(.genre, $0) },
        ]
    }

    func tracks(_ request: RouteRequest) async throws -> HTTPResponse {
        if let album = request.query("album") {
            let items = try await library.albumTracks(GroupID(try Parameters.id(album, what: "album")))
            return try .json(try await Documents.tracks(ListPage(items: items, nextCursor: nil, total: items.count), library))
        }
        let query = try Self.query(request)
        let limit = try request.limit()
        let offset = try request.int("offset", in: 0...Int(Int32.max))
        let after = try request.after()
        if offset != nil && after != nil { throw HTTPError.badRequest("after and offset cannot be combined", code: "invalidValue") }
        let page =
            if let offset {
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
        let after = try request.after()
        let page = try await library.search(text, scope: scope, after: after, limit: try request.limit())
        return try .json(try await Documents.tracks(page, library))
    }

    func groups(_ kind: GroupKind, _ request: RouteRequest) async throws -> HTTPResponse {
        let query = try Parameters.groupQuery(
            kind: kind, by: request.query("by"), sort: request.query("sort"), sortTags: request.query("sortTags"), artist: request.query("artist"))
        let after = try request.after()
        return try .json(Documents.groups(try await library.groups(query, after: after, limit: try request.limit())))
    }

    /// `{"sections":[…]}` of a view, as `/api/sections` is of the tracks: the web page's jump bar over the grids.
    func groupSections(_ kind: GroupKind, _ request: RouteRequest) async throws -> HTTPResponse {
        let query = try Parameters.groupQuery(
            kind: kind, by: request.query("by"), sort: request.query("sort"), sortTags: request.query("sortTags"), artist: request.query("artist"))
        return try .json(SectionsDocument(sections: try await library.groupSections(query)))
    }

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
}

/// `{"id":…,"name":…}`: an artist's group ID by name.
struct ArtistNameDocument: Encodable {
    let id: Int64
    let name: String
}
