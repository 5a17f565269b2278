import pytest

from mcpkit.uritemplate import UriTemplate


def test_simple_variable_matches_one_segment() -> None:
    template = UriTemplate("test://template/{id}/data")
    assert template.variables == ("id",)
    assert template.match("test://template/123/data") == {"id": "123"}
    assert template.match("test://template/a%20b/data") == {"id": "a b"}
    assert template.match("test://template/1/2/data") is None
    assert template.match("test://template//data") is None


def test_reserved_variable_spans_segments() -> None:
    template = UriTemplate("file:///{+path}")
    assert template.match("file:///home/me/a.txt") == {"path": "home/me/a.txt"}


def test_expand_encodes_as_each_expression_requires() -> None:
    assert UriTemplate("x://{a}/{+b}").expand({"a": "p/q", "b": "r/s"}) == "x://p%2Fq/r/s"


def test_literal_uri_has_no_variables() -> None:
    template = UriTemplate("test://static-text")
    assert template.variables == ()
    assert template.match("test://static-text") == {}


@pytest.mark.parametrize("bad", ["x://{a}/{a}", "x://{?q}", "x://{a", "x://a}"])
def test_unsupported_templates_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"template|twice"):
        UriTemplate(bad)
