from syncagent.ssa.paths import Field, Index, Key, Value, readable, render, value_at


def test_render_uses_readable_list_keys():
    path = (
        Field("spec"),
        Field("template"),
        Field("spec"),
        Field("containers"),
        Key((("name", "main"),)),
        Field("image"),
    )
    assert render(path) == ".spec.template.spec.containers[name=main].image"


def test_render_multi_key_with_numbers_bare():
    path = (Field("spec"), Field("ports"), Key((("port", 8000), ("protocol", "TCP"))))
    assert render(path) == ".spec.ports[port=8000,protocol=TCP]"


def test_render_quotes_ambiguous_strings():
    assert Key((("name", "a,b"),)).render() == '[name="a,b"]'
    assert Key((("name", "8000"),)).render() == '[name="8000"]'
    assert Key((("name", "true"),)).render() == '[name="true"]'
    assert Key((("name", ""),)).render() == '[name=""]'


def test_render_set_member_and_index():
    assert render((Field("metadata"), Field("finalizers"), Value("a/b"))) == (
        ".metadata.finalizers[=a/b]"
    )
    assert render((Field("args"), Index(3))) == ".args[3]"


def test_readable_rewrites_server_paths():
    assert readable('.spec.ports[port=8000,protocol="TCP"]') == (
        ".spec.ports[port=8000,protocol=TCP]"
    )
    assert readable('.spec.template.spec.containers[name="main"].image') == (
        ".spec.template.spec.containers[name=main].image"
    )
    assert readable('.metadata.finalizers[="x"]') == ".metadata.finalizers[=x]"
    assert readable(".spec.args[2]") == ".spec.args[2]"


def test_readable_keeps_commas_inside_json_strings():
    assert readable('.a[name="x,y"].b') == '.a[name="x,y"].b'


def test_readable_is_idempotent():
    once = readable('.spec.ports[port=8000,protocol="TCP"]')
    assert readable(once) == once


def test_value_at_follows_keys_and_values():
    obj = {
        "spec": {
            "ports": [
                {"port": 80, "protocol": "TCP", "name": "http"},
                {"port": 8000, "protocol": "TCP", "name": "api"},
            ],
            "finalizers": ["a", "b"],
        }
    }
    port = (Field("spec"), Field("ports"), Key((("port", 8000), ("protocol", "TCP"))))
    assert value_at(obj, (*port, Field("name"))) == "api"
    assert value_at(obj, (Field("spec"), Field("finalizers"), Value("b"))) == "b"
    assert value_at(obj, (Field("spec"), Field("missing")), "none") == "none"
    assert value_at(obj, (Field("spec"), Field("ports"), Index(5))) is None


def test_parse_round_trips_rendered_paths():
    from syncagent.ssa.paths import parse

    for text in (
        ".spec.template.spec.containers[name=main].image",
        ".spec.ports[port=8000,protocol=TCP]",
        ".metadata.finalizers[=a/b]",
        ".spec.args[2]",
    ):
        assert render(parse(text)) == text
    assert parse('.spec.ports[port=8000,protocol="TCP"]') == (
        Field("spec"),
        Field("ports"),
        Key((("port", 8000), ("protocol", "TCP"))),
    )


def test_parse_uses_the_object_to_keep_dotted_keys_whole():
    from syncagent.ssa.paths import parse

    obj = {"metadata": {"labels": {"app.kubernetes.io/name": "x", "app": "y"}}}
    path = parse(".metadata.labels.app.kubernetes.io/name", like=obj)
    assert path[-1] == Field("app.kubernetes.io/name")
    assert value_at(obj, path) == "x"
    assert parse(".metadata.labels.app", like=obj)[-1] == Field("app")
    # Without the object, dots separate.
    assert len(parse(".metadata.labels.app.kubernetes.io/name")) == 5
