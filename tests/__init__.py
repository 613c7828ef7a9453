"""vspec's test suite; a package so its shared modules import by one name in every
import mode (``from tests.builders import pod``, ``from tests.conftest import FakeEngine``)."""
