import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Each user's own data: stars, ratings, plays.
extension NativeAPI {
    /// The routes of this group.
    var userDataRoutes: [Route] {
        [
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
                _ = try await context.write { batch in try batch.recordPlay(id, by: user.id, at: at, source: .api) }
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
                let limit = try request.limit()
                let shown = Array(ids.dropFirst(offset).prefix(limit))
                let byID = Dictionary(try await library.tracks(ids: shown).tracks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                let items = shown.compactMap { byID[$0].map { TrackListItem($0, section: "#") } }
                let next = offset + shown.count < ids.count ? "\(offset + shown.count)" : nil
                let page = try await Documents.tracks(ListPage(items: items, nextCursor: nil, total: ids.count), library)
                return try .json(PageResult(items: page.items, nextCursor: next, total: ids.count))
            },
        ]
    }

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
}
