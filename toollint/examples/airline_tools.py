"""A toy airline benchmark's tools, tau2-bench style, with seeded defects (one per rule) next to
near misses that must stay silent. `toollint demo` lints this file."""

from __future__ import annotations

import logging
from typing import Optional

logger = logging.getLogger(__name__)


def is_tool(kind):  # stand-in for tau2's decorator, so this file needs nothing installed
    def mark(func):
        func.tool_type = kind
        return func

    return mark


class ToolType:
    READ = "read"
    WRITE = "write"
    GENERIC = "generic"


class AirlineTools:
    def __init__(self, db) -> None:
        self.db = db

    def _get_reservation(self, reservation_id: str):
        if reservation_id not in self.db.reservations:
            raise ValueError(f"Reservation {reservation_id} not found")
        return self.db.reservations[reservation_id]

    @is_tool(ToolType.WRITE)
    def book_reservation(self, reservation_id: str, flight_id: str, seats: int, insurance: bool = False) -> str:
        """Book seats on a flight. Checks: the flight must be available."""
        flight = self.db.flights[flight_id]
        if flight.status != "available":
            raise ValueError("Flight is not available")
        flight.available_seats -= seats
        self.db.reservations[reservation_id] = {"flight_id": flight_id, "seats": seats, "insurance": insurance}
        return f"Reservation {reservation_id} booked."

    @is_tool(ToolType.WRITE)
    def cancel_reservation(self, reservation_id: str) -> str:
        """Cancel a reservation and refund it."""
        reservation = self._get_reservation(reservation_id)
        reservation.status = "cancelled"
        logger.debug("flight %s", self.db.flights[reservation.flight_id])
        # seeded TL105: the seats taken by book_reservation are never given back
        return f"Reservation {reservation_id} cancelled."

    @is_tool(ToolType.WRITE)
    def update_baggage(self, reservation_id: str, total_bags: Optional[int] = None, nonfree_bags: Optional[int] = None) -> str:
        """Update the baggage of a reservation (total_bags: the new count, 0 for none).

        Checks: Reservation must not be cancelled.
        """
        reservation = self._get_reservation(reservation_id)
        # if reservation.status == "cancelled":
        #     raise ValueError("Reservation is cancelled")
        if total_bags:  # seeded TL104: 0 bags is a legal update and is dropped
            reservation.total_baggages = total_bags
        if nonfree_bags is not None:  # near miss: the right test
            reservation.nonfree_baggages = nonfree_bags
        return "Baggage updated successfully."  # seeded TL101: nothing may have been written

    @is_tool(ToolType.WRITE)
    def update_passenger_name(self, reservation_id: str, first_name: str, last_name: str) -> str:
        """Change the passenger's name on a reservation: first_name and last_name are stored."""
        reservation = self._get_reservation(reservation_id)
        reservation.first_name = first_name
        logger.info("last name would be %s", last_name)  # seeded TL103: never stored
        return f"Passenger renamed to {first_name} {last_name}."

    @is_tool(ToolType.WRITE)
    def update_cabin(self, reservation_id: str, cabin: str) -> str:
        """Change the cabin class. :param cabin: the new cabin, non-empty."""
        reservation = self._get_reservation(reservation_id)
        # if the cabin is unchanged we still rewrite it (prose: silent)
        if cabin:  # near miss: documented as non-empty
            reservation.cabin = cabin
            return "Cabin updated."
        raise ValueError("cabin must be non-empty")

    @is_tool(ToolType.READ)
    def get_reservation_details(self, reservation_id: str) -> dict:
        """Read a reservation."""
        return dict(self._get_reservation(reservation_id))

    @is_tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human (a signal, not a write: silent)."""
        return "Transfer successful"
