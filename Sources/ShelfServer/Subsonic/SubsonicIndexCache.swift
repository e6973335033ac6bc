import Foundation
import Shelf
import ShelfCore

/// getArtists and getIndexes answered once per library state: the whole album-artist index is
/// tens of thousands of elements at half a million tracks, and apps ask for it at every start
/// and sync while the library rarely changes in between. An entry is the rendered answer for one
/// state (the change token, read before the index, so an entry is never older than its key), one
/// user's artist stars and one format; a few are kept, the oldest dropped first.
final class SubsonicIndexCache: Sendable {
    struct Key: Hashable, Sendable {
        let element: String
        let transaction: Int64
        let stars: [Int64]
        let json: Bool
    }

    private let entries = Locked<[(key: Key, body: Data)]>([])
    private let capacity = 8

    /// The rendered body of `key`, if kept.
    func body(_ key: Key) -> Data? { entries.withLock { $0.first { $0.key == key }?.body } }

    /// Keeps `body` for `key`.
    func store(_ key: Key, _ body: Data) {
        entries.withLock { entries in
            entries.removeAll { $0.key == key }
            entries.append((key, body))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }
}

extension SubsonicAPI {
    /// getArtists (`element` "artists") and getIndexes ("indexes", with `lastModified` and
    /// `ifModifiedSince`): every album artist under the engine's sections, in view order.
    func artists(_ call: SubsonicCall, element: String, lastModified: Bool) async throws -> SubsonicReply {
        let stars = try await groupStars(of: try call.signedIn)
        let token = try await library.currentToken()
        var attributes: [(String, SubsonicValue?)] = [("ignoredArticles", .string(Self.ignoredArticles))]
        if lastModified {
            // Milliseconds of the last write; a client that has the index since then gets none.
            let changed = Int(((try await library.lastChangeDate())?.timeIntervalSince1970 ?? 0) * 1000)
            attributes.append(("lastModified", .int(changed)))
            if let since = try call.parameters.int("ifModifiedSince", in: 0...Int.max), changed <= since {
                return .elements([SubsonicElement(element, attributes)])
            }
        }
        let format = SubsonicFormat.parse(call.parameters.value("f"), callback: call.parameters.value("callback")) ?? .xml
        let key = SubsonicIndexCache.Key(
            element: element, transaction: token.transaction,
            stars: stars.artists.sorted { $0.key < $1.key }.flatMap { [$0.key.rawValue, Int64($0.value.timeIntervalSince1970 * 1000)] },
            json: format != .xml)
        if let body = indexCache.body(key) { return .binary(Self.indexResponse(body, format: format)) }
        var indexes: [(String, [SubsonicElement])] = []
        var cursor: PageCursor?
        repeat {
            // No artwork lookup: a track read per artist would be most of the index's cost (`hasPicture`).
            let page = try await library.groups(GroupQuery(kind: .albumArtist), after: cursor, limit: 5_000, artwork: false)
            for item in page.items {
                if indexes.last?.0 != item.section { indexes.append((item.section, [])) }
                indexes[indexes.count - 1].1.append(Self.artist(item, starred: stars.artists[item.id]))
            }
            cursor = page.nextCursor
        } while cursor != nil
        let root = SubsonicRenderer.envelope(failed: false, [SubsonicElement(
            element, attributes,
            children: indexes.map { name, artists in SubsonicElement("index", repeated: true, [("name", .string(name))], children: artists) })])
        // JSONP is the JSON body inside its callback, so one entry serves both.
        let body = format == .xml ? Data(SubsonicRenderer.xmlDocument(root).utf8) : Data(SubsonicRenderer.json(root))
        indexCache.store(key, body)
        return .binary(Self.indexResponse(body, format: format))
    }

    /// A cached index body as the response of `format`.
    static func indexResponse(_ body: Data, format: SubsonicFormat) -> HTTPResponse {
        switch format {
        case .xml: SubsonicRenderer.response(body, type: "text/xml; charset=utf-8")
        case .json: SubsonicRenderer.response(body, type: "application/json; charset=utf-8")
        case .jsonp(let callback):
            SubsonicRenderer.response(Data(callback.utf8) + Data("(".utf8) + body + Data(");".utf8), type: "application/javascript; charset=utf-8")
        }
    }
}
