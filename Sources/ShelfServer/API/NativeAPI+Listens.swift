import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Each user's listening: the listen log in pages, the statistics the listening view draws, and
/// the scrobbling services they link, with the rules for what is not sent.
extension NativeAPI {
    /// The routes of this group.
    var listenRoutes: [Route] {
        [
            Route("GET", "/api/me/listens", query: ["limit", "cursor", "since", "until"]) { request in
                let user = try request.signedIn
                let page = try await library.listens(
                    of: user.id, since: try Self.time(request, "since"), until: try Self.time(request, "until"), after: request.query("cursor"),
                    limit: try request.limit())
                return try .json(ListensPage(items: page.listens, nextCursor: page.nextCursor))
            },
            Route("GET", "/api/me/stats", query: ["period", "tz", "top"]) { request in
                let user = try request.signedIn
                let text = request.query("period") ?? "month"
                guard let period = StatsPeriod(rawValue: text) else {
                    throw HTTPError.badRequest("period expects week, month, year or all, got '\(text)'", code: "invalidValue")
                }
                // The reader's offset from UTC in minutes east (JavaScript's getTimezoneOffset, negated).
                let offset = try request.int("tz", in: -840...840) ?? 0
                return try .json(
                    try await library.listeningStats(of: user.id, period: period, utcOffset: offset * 60, top: try request.int("top", in: 1...100) ?? 10))
            },
            Route("GET", "/api/me/scrobbling") { request in
                let user = try request.signedIn
                return try await scrobblingDocument(user)
            },
            Route("PUT", "/api/me/scrobbling/rules", bodyLimit: 64 << 10) { request in
                let user = try request.signedIn
                let body = try request.json(RulesBody.self)
                let byName = Dictionary(try await library.libraries().map { ($0.name.lowercased(), $0.id) }, uniquingKeysWith: { first, _ in first })
                let ids = try (body.libraries ?? []).map { name throws(HTTPError) in
                    guard let id = byName[name.lowercased()] else { throw HTTPError.badRequest("no library is called '\(name)'", code: "invalidValue") }
                    return id
                }
                let clean = { (values: [String]?) in (values ?? []).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
                let rules = ScrobbleRules(libraries: ids, genres: clean(body.genres), clients: clean(body.clients))
                try await context.write { batch in try batch.setScrobbleRules(user.id, rules) }
                return try await scrobblingDocument(user)
            },
            Route("PUT", "/api/me/scrobbling/{service}", bodyLimit: 16 << 10) { request in
                let user = try request.signedIn
                let service = try Self.service(request)
                let body = try request.json(LinkBody.self)
                if let url = body.url {
                    guard user.isAdmin else { throw HTTPError.forbidden("only an admin may point a link at another server (url)") }
                    guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), !(parsed.host ?? "").isEmpty else {
                        throw HTTPError.badRequest("url expects an http or https URL, got '\(url)'", code: "invalidValue")
                    }
                }
                let accounts = context.scrobbler.accounts
                do {
                    switch (service, body.token, body.username, body.password) {
                    case (.listenbrainz, let token?, nil, nil): _ = try await accounts.linkListenBrainz(user.id, token: token, url: body.url)
                    case (.lastfm, let token?, nil, nil): _ = try await accounts.linkLastfm(user.id, token: token)
                    case (.lastfm, nil, let name?, let password?):
                        _ = try await accounts.linkLastfm(user.id, username: name, password: password, url: body.url)
                    case (.listenbrainz, _, _, _):
                        throw HTTPError.badRequest(
                            "linking ListenBrainz takes {\"token\": …}: the user token from listenbrainz.org/settings", code: "invalidBody")
                    case (.lastfm, _, _, _):
                        throw HTTPError.badRequest(
                            "linking Last.fm takes {\"token\": …} from Last.fm's authorisation page, or {\"username\": …, \"password\": …}", code: "invalidBody"
                        )
                    }
                } catch let error as ScrobbleError {
                    throw HTTPError(
                        status: error.refusedCredentials ? 400 : 502, code: error.refusedCredentials ? "refused" : "unreachable", message: error.message)
                }
                context.scrobbler.poke()
                return try await scrobblingDocument(user)
            },
            Route("DELETE", "/api/me/scrobbling/{service}") { request in
                let user = try request.signedIn
                let service = try Self.service(request)
                guard try await context.write({ batch in try batch.unlinkScrobbling(user.id, service) }) else {
                    throw HTTPError.notFound("\(service.title) is not linked")
                }
                return try await scrobblingDocument(user)
            },
            Route("GET", "/api/me/scrobbling/lastfm/authorize") { request in
                let user = try request.signedIn
                // The state ties the callback to this user's own flow: a link someone else sends
                // cannot attach their Last.fm account to this user.
                let state = context.scrobbler.beginLastfmFlow(for: user.id)
                let callback = request.http.absoluteURL("/api/me/scrobbling/lastfm/callback?state=\(state)")
                do {
                    return try .json(["url": try context.scrobbler.accounts.lastfmAuthorizeURL(callback: callback)])
                } catch let error as ScrobbleError {
                    throw HTTPError(status: 409, code: "notConfigured", message: error.message)
                }
            },
            // Last.fm sends the browser back here with the token the user just authorised.
            Route("GET", "/api/me/scrobbling/lastfm/callback", query: ["token", "state"]) { request in
                let user = try request.signedIn
                guard let token = request.query("token"), !token.isEmpty else { throw HTTPError.badRequest("Last.fm sent no token", code: "invalidValue") }
                var outcome = "linked"
                if !context.scrobbler.finishLastfmFlow(request.query("state") ?? "", for: user.id) {
                    outcome = "refused"
                } else {
                    do {
                        _ = try await context.scrobbler.accounts.linkLastfm(user.id, token: token)
                        context.scrobbler.poke()
                    } catch let error as ScrobbleError {
                        outcome = error.refusedCredentials ? "refused" : "unreachable"
                    }
                }
                return HTTPResponse(
                    status: 303, headers: [("Location", request.http.link("/#settings/lastfm-\(outcome)")), ("Content-Length", "0")])
            },
        ]
    }

    /// `{"services":[…],"rules":{…},"lastfm":bool}`: each link's state, the user's rules (libraries
    /// by name) and whether the server can link Last.fm at all.
    func scrobblingDocument(_ user: User) async throws -> HTTPResponse {
        let states = try await library.scrobbleStates(of: user.id)
        let rules = try await library.scrobbleRules(of: user.id)
        let names = Dictionary(try await library.libraries().map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        let document = ScrobblingDocument(
            services: states,
            rules: RulesBody(libraries: rules.libraries.compactMap { names[$0] }, genres: rules.genres, clients: rules.clients),
            lastfm: (try? context.scrobbler.accounts.lastfm(nil)) != nil)
        return try .json(document)
    }

    static func service(_ request: RouteRequest) throws(HTTPError) -> ScrobbleService {
        let text = request.parameters["service"] ?? ""
        guard let service = ScrobbleService(rawValue: text) else {
            throw HTTPError.notFound("no scrobbling service '\(text)'; expected listenbrainz or lastfm")
        }
        return service
    }

    /// A time parameter: seconds since 1970, or an ISO 8601 time.
    static func time(_ request: RouteRequest, _ name: String) throws(HTTPError) -> Date? {
        guard let text = request.query(name) else { return nil }
        if let seconds = Double(text), seconds.isFinite { return Date(timeIntervalSince1970: seconds) }
        if let date = InternetDate.iso8601(text) { return date }
        throw HTTPError.badRequest("\(name) expects seconds since 1970 or an ISO 8601 time, got '\(text)'", code: "invalidValue")
    }

    /// `{"items":[…],"nextCursor":…}`.
    struct ListensPage: Encodable {
        let items: [Listen]
        let nextCursor: String?

        enum CodingKeys: String, CodingKey { case items, nextCursor }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(items, forKey: .items)
            try c.encode(nextCursor, forKey: .nextCursor)
        }
    }

    /// A link's body: a ListenBrainz or Last.fm token, or a Last.fm name and password; `url` (admins).
    struct LinkBody: Decodable {
        let token: String?
        let username: String?
        let password: String?
        let url: String?
    }

    /// The rules as the page reads and writes them: libraries by name.
    struct RulesBody: Codable {
        let libraries: [String]?
        let genres: [String]?
        let clients: [String]?
    }

    struct ScrobblingDocument: Encodable {
        let services: [ScrobbleState]
        let rules: RulesBody
        let lastfm: Bool
    }
}
