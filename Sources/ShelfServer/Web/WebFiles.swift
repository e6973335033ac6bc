/// The page's files by the name they are served under, from the bytes SwiftPM embeds
/// (`PackageResources`, one constant per file of `Web/files`). A file added there is added
/// here too; `WebPageTests` fails while one is missing.
enum WebFiles {
    static let all: [(String, [UInt8])] = [
        ("index.html", PackageResources.index_html),
        ("app.js", PackageResources.app_js),
        ("app.css", PackageResources.app_css),
        ("api.js", PackageResources.api_js),
        ("admin.js", PackageResources.admin_js),
        ("audio-engine.js", PackageResources.audio_engine_js),
        ("edit-dialog.js", PackageResources.edit_dialog_js),
        ("groups-grid.js", PackageResources.groups_grid_js),
        ("i18n-en.js", PackageResources.i18n_en_js),
        ("i18n-ja.js", PackageResources.i18n_ja_js),
        ("i18n.js", PackageResources.i18n_js),
        ("icon.svg", PackageResources.icon_svg),
        ("jump-bar.js", PackageResources.jump_bar_js),
        ("lyrics.js", PackageResources.lyrics_js),
        ("manifest.webmanifest", PackageResources.manifest_webmanifest),
        ("pages.css", PackageResources.pages_css),
        ("pages.js", PackageResources.pages_js),
        ("player.css", PackageResources.player_css),
        ("player.js", PackageResources.player_js),
        ("playlists.js", PackageResources.playlists_js),
        ("settings.js", PackageResources.settings_js),
        ("shortcuts.js", PackageResources.shortcuts_js),
        ("sources.js", PackageResources.sources_js),
        ("sw.js", PackageResources.sw_js),
        ("virtual-table.js", PackageResources.virtual_table_js),
    ]
}
