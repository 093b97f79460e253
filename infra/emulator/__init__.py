"""Local runtime: the whole backend on one machine (RULINGS.md, "Local runtime"). Never deployed.

``python -m infra.emulator`` for people; :class:`Emulator` for tests::

    async with Emulator(port=0, turn_seconds=1) as emu:
        ...  # emu.ws_url, emu.url, emu.callback_url, emu.clock, emu.dynamodb_endpoint
"""

from infra.emulator.dynamo import EmbeddedDynamo
from infra.emulator.emulator import Emulator
from infra.emulator.gateway import LocalGateway
from infra.emulator.lambda_context import LambdaContext, make_context
from infra.emulator.states import LocalClock

__all__ = [
    "EmbeddedDynamo",
    "Emulator",
    "LambdaContext",
    "LocalClock",
    "LocalGateway",
    "make_context",
]
