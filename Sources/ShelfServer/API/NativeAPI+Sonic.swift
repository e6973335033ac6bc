import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Sonic similarity over the native API: a track's neighbours, mixes seeded by a track, an album
/// or an artist, paths between two tracks, and the analysis' state.
extension NativeAPI {
    /// The routes of this group.
    var sonicRoutes: [Route] {
        [
            Route("GET", "/api/tracks/{id}/similar", query: ["count", "sameAlbum"]) { request in
                let id = TrackID(try request.id("id", what: "track"))
                let count = try request.int("count", in: 1...500) ?? 10
                let matches = try await library.similarTracks(to: id, count: count, preferVariety: request.query("sameAlbum") != "true")
                return try .json(SimilarDocument(matches: try await library.sonicDocuments(matches)))
            },
            // An instant mix: neighbours of a track, an album's tracks or an artist's, without
            // those in `exclude` (the page leaves out what it played in the last hour).
            Route("GET", "/api/similar", query: ["track", "album", "artist", "count", "exclude"]) { request in
                let count = try request.int("count", in: 1...500) ?? 25
                let seeds: [TrackID]
                if let text = request.query("track") {
                    guard let id = Int64(text), id > 0 else { throw HTTPError.badRequest("track expects a track ID, got '\(text)'", code: "invalidValue") }
                    seeds = [TrackID(id)]
                } else if let text = request.query("album") {
                    guard let id = Int64(text) else { throw HTTPError.badRequest("album expects an album ID, got '\(text)'", code: "invalidValue") }
                    seeds = try await library.albumTracks(GroupID(id)).map(\.id)
                } else if let text = request.query("artist") {
                    guard let id = Int64(text) else { throw HTTPError.badRequest("artist expects an artist ID, got '\(text)'", code: "invalidValue") }
                    var found = try await library.group(GroupID(id), kind: .albumArtist)
                    if found == nil { found = try await library.group(GroupID(id), kind: .artist) }
                    guard let artist = found else { throw HTTPError.notFound("there is no artist \(id)") }
                    let named = try await library.snapshot(
                        LibraryQuery(filter: .or([.text(.albumArtist, .equals(artist.name)), .text(.artist, .equals(artist.name))])))
                    seeds = try await library.tracks(named, creditedTo: GroupID(id))
                } else {
                    throw HTTPError.badRequest("give track, album or artist", code: "missingParameter")
                }
                let exclude = Set(
                    (request.query("exclude") ?? "").split(separator: ",").compactMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.map { TrackID($0) })
                let matches = try await library.similarTracks(toAll: seeds, count: count, excluding: exclude)
                return try .json(SimilarDocument(matches: try await library.sonicDocuments(matches)))
            },
            Route("GET", "/api/mix", query: ["from", "to", "count"]) { request in
                func id(_ name: String) throws(HTTPError) -> TrackID {
                    guard let text = request.query(name) else { throw HTTPError.badRequest("\(name) is missing (a track ID)", code: "missingParameter") }
                    guard let value = Int64(text), value > 0 else {
                        throw HTTPError.badRequest("\(name) expects a track ID, got '\(text)'", code: "invalidValue")
                    }
                    return TrackID(value)
                }
                let path = try await library.sonicPath(from: try id("from"), to: try id("to"), count: try request.int("count", in: 1...500) ?? 25)
                return try .json(MixDocument(path: try await library.sonicDocuments(path)))
            },
            Route("GET", "/api/analysis") { _ in try .json(try await context.analysis.status()) },
            Route("POST", "/api/analysis", access: .admin) { _ in
                context.analysis.runNow()
                return try .json(try await context.analysis.status(), status: 202)
            },
        ]
    }
}
